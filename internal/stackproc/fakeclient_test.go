package stackproc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/stack/gonet"
)

// fakeClient is a preloaded process's side of the protocol, in Go: what
// libsavanna_preload.so does, without its interposition, so that the
// stack side's specs drive the real protocol.
type fakeClient struct {
	c              *net.UnixConn
	m              Mem
	toStack, toApp int
	req, resp      recRing
	seq            uint32
}

func dialFake(path string) (*fakeClient, error) { return dialFakeToken(path, 0) }

// dialFakeToken says a hello with a fork token (a forked child's).
func dialFakeToken(path string, token uint64) (*fakeClient, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	var h [helloLen]byte
	binary.LittleEndian.PutUint32(h[0:], Magic)
	binary.LittleEndian.PutUint32(h[4:], Version)
	binary.LittleEndian.PutUint32(h[8:], uint32(unix.Getpid()))
	binary.LittleEndian.PutUint64(h[12:], token)
	if _, err := c.Write(h[:]); err != nil {
		return nil, err
	}
	oob := make([]byte, unix.CmsgSpace(3*4))
	n, oobn, _, _, err := c.ReadMsgUnix(h[:answerLen], oob)
	if err != nil || n != answerLen {
		return nil, fmt.Errorf("hello answer: %d bytes, %v", n, err)
	}
	if e := binary.LittleEndian.Uint32(h[8:]); e != 0 {
		return nil, fmt.Errorf("hello refused: %v", unix.Errno(e))
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("control messages: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 3 {
		return nil, fmt.Errorf("rights: %d fds, %v", len(fds), err)
	}
	hdr, err := unix.Mmap(fds[0], 0, headerLen, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint64(hdr[hSize:])
	_ = unix.Munmap(hdr)
	b, err := unix.Mmap(fds[0], 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	_ = unix.Close(fds[0])
	f := &fakeClient{c: c, toStack: fds[1], toApp: fds[2]}
	f.m = Mem{b: b}
	f.m.g = Geometry{Slots: int(f.m.u32(hNSlots).Load()), Ring: int(f.m.u32(hRing).Load()), Recs: int(f.m.u32(hRecs).Load())}
	if f.m.g.slotOff() != int(f.m.u64(hSlotOff).Load()) || f.m.g.stride() != int(f.m.u64(hStride).Load()) {
		return nil, errors.New("geometry disagrees with the header")
	}
	f.req, f.resp = f.m.recRing(int(f.m.u64(hReqOff).Load())), f.m.recRing(int(f.m.u64(hRespOff).Load()))
	return f, nil
}

func (f *fakeClient) close() {
	_ = f.c.Close()
	_ = unix.Munmap(f.m.b)
	_ = unix.Close(f.toStack)
	_ = unix.Close(f.toApp)
}

func (f *fakeClient) doorbell() {
	var one [8]byte
	one[0] = 1
	_, _ = unix.Write(f.toStack, one[:])
}

// call posts one request and waits (bounded) for its answer.
func (f *fakeClient) call(op, slot int, arg int32, addr [4]byte, port uint16) (res int64, errno unix.Errno, peer [4]byte, peerPort uint16) {
	f.seq++
	t := f.req.tail.Load()
	r := f.req.rec(t)
	clear(r)
	binary.LittleEndian.PutUint32(r[qSeq:], f.seq)
	binary.LittleEndian.PutUint16(r[qOp:], uint16(op))
	binary.LittleEndian.PutUint32(r[qSlot:], uint32(int32(slot)))
	binary.LittleEndian.PutUint32(r[qArg:], uint32(arg))
	binary.BigEndian.PutUint16(r[qPort:], port)
	copy(r[qAddr:], addr[:])
	f.req.tail.Store(t + 1)
	f.doorbell()
	deadline := time.Now().Add(10 * time.Second)
	for f.resp.tail.Load() == f.resp.head.Load() {
		if time.Now().After(deadline) {
			return -1, unix.ETIMEDOUT, peer, 0
		}
		time.Sleep(100 * time.Microsecond)
	}
	h := f.resp.head.Load()
	p := f.resp.rec(h)
	if binary.LittleEndian.Uint32(p[pSeq:]) != f.seq {
		return -1, unix.EPROTO, peer, 0
	}
	res = int64(binary.LittleEndian.Uint64(p[pResult:]))
	errno = unix.Errno(binary.LittleEndian.Uint32(p[pErrno:]))
	copy(peer[:], p[pAddr:pAddr+4])
	peerPort = binary.BigEndian.Uint16(p[pPort:])
	f.resp.head.Store(h + 1)
	return
}

// until polls cond (bounded) on slot's changes.
func (f *fakeClient) until(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Microsecond)
	}
	return true
}

func (f *fakeClient) slotU32(slot, off int) uint32 { return f.m.u32(f.m.g.slot(slot) + off).Load() }

// startServer starts a stack process's server for cfg on a socket in a
// temporary folder, both removed at the spec's end; path is the socket.
func startServer(cfg Config) (srv *Server, path string) {
	srv, err := NewServer(cfg)
	Expect(err).NotTo(HaveOccurred())
	d, err := os.MkdirTemp("", "svsp")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, d)
	path = filepath.Join(d, "stack.sock")
	Expect(srv.Listen(path)).To(Succeed())
	go func() { _ = srv.Serve() }()
	DeferCleanup(srv.Close)
	return srv, path
}

// acceptOne has f listen on port, dials it from the ring pair's other
// stack and accepts: the accepted slot, and the peer's end (closed at
// the spec's end).
func (f *fakeClient) acceptOne(pair *livetest.RingPair, port uint16) (slot int, peer *gonet.Conn) {
	ls, errno, _, _ := f.call(opSocket, -1, 0, [4]byte{}, 0)
	Expect(errno).To(BeZero())
	_, errno, _, _ = f.call(opBind, int(ls), 0, [4]byte{}, port)
	Expect(errno).To(BeZero())
	_, errno, _, _ = f.call(opListen, int(ls), 8, [4]byte{}, 0)
	Expect(errno).To(BeZero())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	peer, err := gonet.Dial(ctx, pair.B, fmt.Sprintf("10.9.0.1:%d", port))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(peer.Close)
	Expect(f.until(10*time.Second, func() bool { return f.slotU32(int(ls), sAccq) == 1 })).To(BeTrue(), "the accept queue")
	cs, errno, _, _ := f.call(opAccept, int(ls), 0, [4]byte{}, 0)
	Expect(errno).To(BeZero())
	return int(cs), peer
}
