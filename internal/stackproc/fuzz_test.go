package stackproc

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/savanna-sim/savanna/internal/livetest"
)

// FuzzRequest feeds a process's request ring records of any bytes (a
// preloaded process is not trusted): every record gets an answer, none
// panics, and the slots stay consistent.
func FuzzRequest(f *testing.F) {
	seed := func(op uint16, slot int32, arg int32, port uint16, addr [4]byte) []byte {
		r := make([]byte, recSize)
		binary.LittleEndian.PutUint16(r[qOp:], op)
		binary.LittleEndian.PutUint32(r[qSlot:], uint32(slot))
		binary.LittleEndian.PutUint32(r[qArg:], uint32(arg))
		binary.BigEndian.PutUint16(r[qPort:], port)
		copy(r[qAddr:], addr[:])
		return r
	}
	f.Add(seed(opSocket, -1, 0, 0, [4]byte{}))
	f.Add(seed(opBind, 0, 0, 7000, [4]byte{}))
	f.Add(seed(opListen, 0, -5, 0, [4]byte{}))
	f.Add(seed(opAccept, 0, 0, 0, [4]byte{}))
	f.Add(seed(opShutdown, 0, 77, 0, [4]byte{}))
	f.Add(seed(opClose, 1<<30, 0, 0, [4]byte{}))
	f.Add(seed(opFork, -1, 0, 0, [4]byte{}))
	f.Add(seed(999, -7, 0, 0, [4]byte{}))
	f.Add(seed(opSocket, -1, unix.AF_INET6, 0, [4]byte{}))
	f.Add(seed(opBind, 0, 3, 7001, [4]byte{0xfd, 0x09}))
	f.Add(seed(opConnect, 0, 2, 7002, [4]byte{}))
	f.Add(seed(opListen, 0, 8, 0, [4]byte{}))
	f.Add([]byte{1, 2, 3})
	// Dual-stack, so that AF_INET6 sockets are made and their 16-byte
	// addresses parsed.
	pair, err := livetest.NewRingPairWith(livetest.RingPairConfig{A4: "10.9.0.1/24", A6: "fd09::1/64",
		B4: "10.9.0.2/24", B6: "fd09::2/64", FastDAD: true})
	if err != nil {
		f.Fatal(err)
	}
	defer pair.Stop()
	s, err := NewServer(Config{Runtime: pair.A, Geometry: Geometry{Slots: 4, Ring: 4096, Recs: 16}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		mem, err := newSharedMem("fuzz", s.cfg.Geometry)
		if err != nil {
			t.Fatal(err)
		}
		p := newProc(s, nil, 1, mem)
		var q [recSize]byte
		copy(q[:], rec)
		// A socket first, so that slot 0 exists for the record to act
		// on: AF_INET6 when the record's last byte is odd.
		fam := int32(unix.AF_INET)
		if len(rec) > 0 && rec[len(rec)-1]&1 != 0 {
			fam = unix.AF_INET6
		}
		for _, r := range [][]byte{seed(opSocket, -1, fam, 0, [4]byte{}), q[:]} {
			copy(p.req.rec(p.req.tail.Load()), r)
			p.req.tail.Add(1)
		}
		p.serveRequests()
		if got := p.resp.tail.Load(); got != 2 {
			t.Fatalf("%d answers to 2 requests", got)
		}
		for i, k := range p.socks {
			if k != nil && k.slot != i {
				t.Fatalf("slot %d holds socket %d", i, k.slot)
			}
		}
		p.mu.Lock()
		live := append([]*sock(nil), p.socks...)
		p.mu.Unlock()
		for _, k := range live {
			if k != nil {
				k.close()
			}
		}
		p.wg.Wait()
		mem.close()
	})
}
