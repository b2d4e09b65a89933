package tcp

import (
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// FuzzParse: the header and option parser never panics, and what it
// accepts survives Emit/Parse unchanged.
func FuzzParse(f *testing.F) {
	seeds := []Repr{
		{Flags: FlagSYN, MSS: 1460, HasWScale: true, WScale: 7, SACKPermitted: true, HasTS: true, TSVal: 1},
		{Flags: FlagACK, HasTS: true, NumSACK: 2, SACK: [4]SACKBlock{{1, 2}, {3, 4}}, Payload: []byte("x")},
	}
	for _, r := range seeds {
		b := make([]byte, r.HeaderLen()+len(r.Payload))
		copy(b[r.Emit(b):], r.Payload)
		f.Add(b)
	}
	f.Add(hdr(6, []byte{5, 0, 0, 0}))
	f.Add(hdr(15, make([]byte, 40)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(b)
		if err != nil {
			return
		}
		out := make([]byte, r.HeaderLen()+len(r.Payload))
		copy(out[r.Emit(out):], r.Payload)
		r2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of emitted header: %v", err)
		}
		r.Payload, r2.Payload = nil, nil
		if r.NumSACK > 3 && r.HasTS {
			return // 4 blocks and timestamps exceed 40 bytes; Emit is not asked to
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip changed the header:\n%+v\n%+v", r, r2)
		}
	})
}

type discard struct {
	ipv4Network
	last []byte
}

func (d *discard) SendSegment(_ time.Duration, _, _ IP, seg []byte) error {
	d.last = append(d.last[:0], seg...)
	return nil
}

// fuzzTarget is a stack with a listener and one established connection.
type fuzzTarget struct {
	s      *Stack
	out    *discard
	c      *Conn
	local  IP
	remote IP
	now    time.Duration
}

func newFuzzTarget() *fuzzTarget {
	ft := &fuzzTarget{out: &discard{}, local: IPFrom4([4]byte{10, 0, 0, 1}), remote: IPFrom4([4]byte{10, 0, 0, 2})}
	s, err := New(tuned(func(c *Config) {
		c.MaxOOORanges = 4
		c.RecvBuffer = 64 << 10
		c.SendBuffer = 64 << 10
		c.SynBacklog = 4
	}),
		rand.New(rand.NewPCG(3, 4)), ft.out)
	if err != nil {
		panic(err)
	}
	ft.s = s
	l, err := s.Listen(ft.local, 80, 4)
	if err != nil {
		panic(err)
	}
	syn := Repr{SrcPort: 999, DstPort: 80, Seq: 100, Flags: FlagSYN, Window: 65535, MSS: 1000,
		HasWScale: true, WScale: 2, SACKPermitted: true, HasTS: true, TSVal: 1}
	ft.inject(syn, true)
	sa, _ := Parse(ft.out.last)
	ft.inject(Repr{SrcPort: 999, DstPort: 80, Seq: 101, Ack: sa.Seq + 1, Flags: FlagACK, Window: 1000,
		HasTS: true, TSVal: 2, TSEcr: sa.TSVal}, true)
	c, ok := l.Accept()
	if !ok {
		panic("fuzz target: handshake failed")
	}
	ft.c = c
	_, _ = c.Write(make([]byte, 20000))
	s.Poll(0)
	return ft
}

func (ft *fuzzTarget) inject(r Repr, sum bool) {
	b := make([]byte, r.HeaderLen()+len(r.Payload))
	copy(b[r.Emit(b):], r.Payload)
	if sum {
		setV4Checksum(b, ft.remote, ft.local)
	}
	ft.s.Input(ft.now, ft.remote, ft.local, b)
	ft.s.Poll(ft.now)
}

// FuzzInput: random segments into a listener and an established
// connection never panic. Each record of the input is one segment; a
// selector byte chooses to aim it at the connection (ports, sequence
// and acknowledgment near the live values) and to fix its checksum, so
// that the state machine is reached and not just the parser.
func FuzzInput(f *testing.F) {
	f.Add([]byte{7, 20, 0x10, 0, 0, 0, 0, 0x50, 0x10, 0, 100})
	f.Add([]byte{3, 24, 0x01, 0x02, 0, 0, 0, 0, 0x60, 0x12, 0xff, 0xff, 0, 0, 0, 0, 2, 4, 5, 0xb4})
	f.Add([]byte{7, 28, 0x11, 0, 0, 5, 0, 0, 0x50, 0x04})
	f.Fuzz(func(t *testing.T, data []byte) {
		ft := newFuzzTarget()
		c := ft.c
		for len(data) >= 2 {
			sel, n := data[0], int(data[1])
			data = data[2:]
			if n > len(data) {
				n = len(data)
			}
			seg := append([]byte(nil), data[:n]...)
			data = data[n:]
			if len(seg) >= 4 && sel&1 != 0 {
				binary.BigEndian.PutUint16(seg[0:], 999)
				binary.BigEndian.PutUint16(seg[2:], 80)
			}
			if len(seg) >= 12 && sel&2 != 0 && c.state != StateClosed {
				binary.BigEndian.PutUint32(seg[4:], uint32(c.rcvNxt)+uint32(int8(seg[4])))
				binary.BigEndian.PutUint32(seg[8:], uint32(c.sndUna)+uint32(int8(seg[8]))*100)
			}
			if len(seg) >= 20 && sel&4 != 0 {
				setV4Checksum(seg, ft.remote, ft.local)
			}
			if sel&8 != 0 {
				ft.now += time.Duration(sel>>4) * 50 * time.Millisecond
			}
			ft.s.Input(ft.now, ft.remote, ft.local, seg)
			ft.s.Poll(ft.now)
			if sel&0x80 != 0 {
				buf := make([]byte, 3000)
				_, _ = c.Read(buf)
				_, _ = c.Write(buf)
			}
		}
		ft.now += time.Hour
		ft.s.Poll(ft.now)
	})
}
