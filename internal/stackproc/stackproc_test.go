package stackproc

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/stack/gonet"
)

// buildPreload builds preload/ (C) once for the suite.
var buildPreload = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "svpre")
	if err != nil {
		return "", err
	}
	out, err := exec.Command("../../preload/build", dir).CombinedOutput()
	if err != nil {
		return "", &buildError{string(out), err}
	}
	return dir, nil
})

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

var _ = Describe("the shared-memory layout", func() {
	It("is the same from Go and from C: a C program produces and consumes through the Go side's mapping, across many wraps", func() {
		if _, err := exec.LookPath("gcc"); err != nil {
			Skip("needs gcc")
		}
		dir, err := buildPreload()
		Expect(err).NotTo(HaveOccurred())
		g := Geometry{Slots: 4, Ring: 4096, Recs: 16}
		sm, err := newSharedMem("ringcheck", g)
		Expect(err).NotTo(HaveOccurred())
		defer sm.close()
		const slot, bytes = 2, 1 << 20
		cmd := exec.Command(filepath.Join(dir, "ringcheck"), "3", strconv.Itoa(slot), strconv.Itoa(bytes))
		// A duplicate for the os.File: its finalizer closes what it holds,
		// and sm.close closes sm.fd, so one number must not be both (a
		// later spec's fresh descriptor would be closed under it).
		dup, err := unix.Dup(sm.fd)
		Expect(err).NotTo(HaveOccurred())
		memf := os.NewFile(uintptr(dup), "memfd")
		defer memf.Close()
		cmd.ExtraFiles = []*os.File{memf}
		out := &syncBuf{}
		cmd.Stdout, cmd.Stderr = out, out
		Expect(cmd.Start()).To(Succeed())
		rx, tx := sm.RxRing(slot), sm.TxRing(slot)
		var sent, got int
		buf := make([]byte, 1500)
		deadline := time.Now().Add(20 * time.Second)
		for (sent < bytes || got < bytes) && time.Now().Before(deadline) {
			n := min(len(buf), bytes-sent)
			for i := range n {
				buf[i] = byte(((sent+i)*13 + 5) % 251)
			}
			sent += rx.Write(buf[:n])
			m := tx.Read(buf)
			for i := range m {
				Expect(buf[i]).To(Equal(byte(((got+i)*7+3)%251)), "byte %d from C", got+i)
			}
			got += m
			if n == 0 && m == 0 {
				time.Sleep(10 * time.Microsecond)
			}
		}
		Expect(cmd.Wait()).To(Succeed(), out.String())
		Expect(got).To(Equal(bytes))
		Expect(out.String()).To(ContainSubstring("ringcheck: ok sent=1048576 got=1048576"))
		Expect(out.String()).To(ContainSubstring("slots=4 ring=4096 stride=8704"))
	})

	It("refuses geometries the C side cannot use, naming the field", func() {
		Expect(Geometry{Slots: 0, Ring: 4096, Recs: 4}.Validate()).To(MatchError(ContainSubstring("slots 0")))
		Expect(Geometry{Slots: 1, Ring: 5000, Recs: 4}.Validate()).To(MatchError(ContainSubstring("ring 5000")))
		Expect(Geometry{Slots: 1, Ring: 4096, Recs: 3}.Validate()).To(MatchError(ContainSubstring("records 3")))
	})
})

type syncBuf struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

var _ = Describe("the stack process", func() {
	var (
		pair *livetest.RingPair
		srv  *Server
		path string
	)
	BeforeEach(func() {
		var err error
		pair, err = livetest.NewRingPair(1, 1)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(pair.Stop)
		srv, path = startServer(Config{Runtime: pair.A, Geometry: Geometry{Slots: 8, Ring: 4096, Recs: 16}})
	})

	It("serves a fake Go client over the real protocol: listen, accept, echo through the rings, EOF, close; statistics per process and socket", func() {
		f, err := dialFake(path)
		Expect(err).NotTo(HaveOccurred())
		slot, errno, _, _ := f.call(opSocket, -1, 0, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		_, errno, _, _ = f.call(opBind, int(slot), 0, [4]byte{10, 9, 0, 7}, 7000)
		Expect(errno).To(Equal(unix.EADDRNOTAVAIL), "not the stack's address")
		_, errno, _, _ = f.call(opBind, int(slot), 0, [4]byte{}, 7000)
		Expect(errno).To(BeZero())
		_, errno, _, _ = f.call(opListen, int(slot), 8, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		_, errno, _, _ = f.call(opAccept, int(slot), 0, [4]byte{}, 0)
		Expect(errno).To(Equal(unix.EAGAIN), "nothing to accept yet")

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := gonet.Dial(ctx, pair.B, "10.9.0.1:7000")
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		Expect(f.until(10*time.Second, func() bool { return f.slotU32(int(slot), sAccq) == 1 })).To(BeTrue(), "the accept queue")
		cs, errno, peer, peerPort := f.call(opAccept, int(slot), 0, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		Expect(peer).To(Equal([4]byte{10, 9, 0, 2}))
		Expect(int(peerPort)).To(Equal(c.LocalAddr().(*net.TCPAddr).Port))
		Expect(f.slotU32(int(cs), sState)).To(Equal(stConnected))
		Expect(f.slotU32(int(cs), sLPort)).To(BeEquivalentTo(7000))

		msg := make([]byte, 20000) // five times the ring: wraps and back-pressure both ways
		for i := range msg {
			msg[i] = byte(i * 17)
		}
		go func() { _, _ = c.Write(msg); _ = c.CloseWrite() }()
		rx, tx := f.m.RxRing(int(cs)), f.m.TxRing(int(cs))
		var echoed []byte
		buf := make([]byte, 3000)
		eof := false
		Expect(f.until(20*time.Second, func() bool {
			n := rx.Read(buf)
			if n > 0 {
				echoed = append(echoed, buf[:n]...)
				if f.slotU32(int(cs), sRxWait) != 0 {
					f.doorbell()
				}
			}
			if n == 0 && f.slotU32(int(cs), sFlags)&fEOF != 0 && rx.Len() == 0 {
				eof = true
			}
			return eof
		})).To(BeTrue(), "EOF after %d bytes", len(echoed))
		Expect(echoed).To(Equal(msg))
		sent := 0
		back := make([]byte, 0, len(msg))
		done := make(chan error, 1)
		go func() {
			b := make([]byte, len(msg))
			_, err := io.ReadFull(c, b)
			back = b
			done <- err
		}()
		Expect(f.until(20*time.Second, func() bool {
			n := tx.Write(msg[sent:])
			sent += n
			if n > 0 && f.slotU32(int(cs), sTxWait) != 0 {
				f.doorbell()
			}
			return sent == len(msg)
		})).To(BeTrue())
		f.doorbell()
		Eventually(done).WithTimeout(20 * time.Second).Should(Receive(BeNil()))
		Expect(back).To(Equal(msg))

		_, errno, _, _ = f.call(opClose, int(cs), 0, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		_, err = c.Read(buf)
		Expect(err).To(Equal(io.EOF), "the stack sent our FIN")
		_, errno, _, _ = f.call(opClose, int(slot), 0, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		_, errno, _, _ = f.call(opListen, int(slot), 8, [4]byte{}, 0)
		Expect(errno).To(Equal(unix.EBADF), "a closed slot")

		// The counters the C library keeps in the header.
		f.m.u64(hCounters + 5*16).Store(3)     // read: 3 calls
		f.m.u64(hCounters + 9*16 + 8).Store(1) // setsockopt: 1 refused
		f.close()
		Eventually(func() []ProcStats { return srv.Stats().Processes }).WithTimeout(10 * time.Second).
			Should(ContainElement(HaveField("Exited", true)))
		st := srv.Stats()
		Expect(st.Server.Processes).To(BeEquivalentTo(1))
		p := st.Processes[0]
		Expect(p.PID).To(Equal(os.Getpid()))
		Expect(p.Opened).To(BeEquivalentTo(2))
		Expect(p.Accepted).To(BeEquivalentTo(1))
		Expect(p.RxBytes).To(BeEquivalentTo(len(msg)))
		Expect(p.TxBytes).To(BeEquivalentTo(len(msg)))
		Expect(p.BadRequests).To(BeEquivalentTo(1))
		Expect(p.Calls).To(HaveKeyWithValue("read", uint64(3)))
		Expect(p.Refused).To(HaveKeyWithValue("setsockopt", uint64(1)))
		Expect(p.Sockets).To(ContainElement(And(HaveField("Kind", "accepted"), HaveField("RxBytes", uint64(len(msg))), HaveField("End", "eof"))))
		Expect(p.Sockets).To(ContainElement(And(HaveField("Kind", "listen"), HaveField("Accepts", uint64(1)))))
		text := FormatStats(st)
		GinkgoWriter.Print(text)
		Expect(text).To(ContainSubstring("preload process pid="))
		Expect(text).To(ContainSubstring("kind=accepted local=10.9.0.1:7000"))
	})

	It("connects out, and reports a refused connect as ECONNREFUSED in the slot", func() {
		ln, err := gonet.Listen(pair.B, 7100)
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		f, err := dialFake(path)
		Expect(err).NotTo(HaveOccurred())
		defer f.close()
		s1, _, _, _ := f.call(opSocket, -1, 0, [4]byte{}, 0)
		_, errno, _, _ := f.call(opConnect, int(s1), 0, [4]byte{10, 9, 0, 2}, 7101)
		Expect(errno).To(Equal(unix.EINPROGRESS))
		Expect(f.until(10*time.Second, func() bool { return f.slotU32(int(s1), sState) == stFailed })).To(BeTrue())
		Expect(unix.Errno(f.slotU32(int(s1), sErr))).To(Equal(unix.ECONNREFUSED))
		s2, _, _, _ := f.call(opSocket, -1, 0, [4]byte{}, 0)
		_, errno, _, _ = f.call(opConnect, int(s2), 0, [4]byte{10, 9, 0, 2}, 7100)
		Expect(errno).To(Equal(unix.EINPROGRESS))
		Expect(f.until(10*time.Second, func() bool { return f.slotU32(int(s2), sState) == stConnected })).To(BeTrue())
		_, errno, _, _ = f.call(opConnect, int(s2), 0, [4]byte{10, 9, 0, 2}, 7100)
		Expect(errno).To(Equal(unix.EISCONN))
		Expect(f.slotU32(int(s2), sRPort)).To(BeEquivalentTo(7100))
	})

	It("answers a statistics request while a process runs: its open sockets, its calls and refusals so far", func() {
		f, err := dialFake(path)
		Expect(err).NotTo(HaveOccurred())
		defer f.close()
		slot, _, _, _ := f.call(opSocket, -1, 0, [4]byte{}, 0)
		_, errno, _, _ := f.call(opListen, int(slot), 8, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		f.m.u64(hCounters + 5*16).Store(4)      // read: 4 calls
		f.m.u64(hCounters + 21*16 + 8).Store(2) // recvmmsg: 2 refused
		st, err := RequestStats(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Server.StatsRequests).To(BeEquivalentTo(1))
		var me *ProcStats
		for i := range st.Processes {
			if !st.Processes[i].Exited {
				me = &st.Processes[i]
			}
		}
		Expect(me).NotTo(BeNil(), "the running process")
		Expect(me.Calls).To(HaveKeyWithValue("read", uint64(4)))
		Expect(me.Refused).To(HaveKeyWithValue("recvmmsg", uint64(2)), "refusals of a running process")
		Expect(me.Sockets).To(ContainElement(And(HaveField("Kind", "listen"), HaveField("Open", true))))
		text := FormatStats(st)
		Expect(text).To(MatchRegexp(`preload socket pid=\d+ slot=\d+ kind=listen local=0\.0\.0\.0:\d+ .* open=true\n`))
		Expect(text).To(ContainSubstring("stats_requests=1"))
		_, err = RequestStats(path + ".none")
		Expect(err).To(MatchError(ContainSubstring(".none")))
	})

	It("shares a port among SO_REUSEPORT listeners only, spreads connections over them, and frees it with the last", func() {
		f, err := dialFake(path)
		Expect(err).NotTo(HaveOccurred())
		defer f.close()
		sock := func() int { s, _, _, _ := f.call(opSocket, -1, 0, [4]byte{}, 0); return int(s) }
		s1, s2, s3 := sock(), sock(), sock()
		_, errno, _, _ := f.call(opBind, s1, 1, [4]byte{}, 7200)
		Expect(errno).To(BeZero())
		_, errno, _, _ = f.call(opBind, s2, 0, [4]byte{}, 7200)
		Expect(errno).To(Equal(unix.EADDRINUSE), "without SO_REUSEPORT")
		_, errno, _, _ = f.call(opBind, s3, 1, [4]byte{}, 7200)
		Expect(errno).To(BeZero(), "with SO_REUSEPORT on both")
		for _, s := range []int{s1, s3} {
			_, errno, _, _ = f.call(opListen, s, 64, [4]byte{}, 0)
			Expect(errno).To(BeZero())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for i := 0; i < 16; i++ {
			c, err := gonet.Dial(ctx, pair.B, "10.9.0.1:7200")
			Expect(err).NotTo(HaveOccurred())
			defer c.Close()
		}
		Expect(f.until(10*time.Second, func() bool { return f.slotU32(s1, sAccq)+f.slotU32(s3, sAccq) == 16 })).To(BeTrue())
		Expect(f.slotU32(s1, sAccq)).To(BeNumerically(">", 0), "the hash spreads 16 flows over both")
		Expect(f.slotU32(s3, sAccq)).To(BeNumerically(">", 0))
		Expect(srv.Stats().Server.ReuseportSpread).To(BeEquivalentTo(16))
		for _, s := range []int{s1, s2, s3} {
			f.call(opClose, s, 0, [4]byte{}, 0)
		}
		s4 := sock()
		_, errno, _, _ = f.call(opBind, s4, 0, [4]byte{}, 7200)
		Expect(errno).To(BeZero(), "the port is free again")
	})

	It("holds a forking process's listener for the child that presents the token, at the same slot, after the parent is gone", func() {
		p, err := dialFake(path)
		Expect(err).NotTo(HaveOccurred())
		s, _, _, _ := p.call(opSocket, -1, 0, [4]byte{}, 0)
		s, _, _, _ = p.call(opSocket, -1, 0, [4]byte{}, 0) // slot 1: the child must find it there
		_, errno, _, _ := p.call(opListen, int(s), 8, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		tok, errno, _, _ := p.call(opFork, -1, 0, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		Expect(tok).To(BeNumerically(">", 0))
		port := p.slotU32(int(s), sLPort)
		p.close() // the parent exits before its child claims
		Eventually(func() []ProcStats { return srv.Stats().Processes }).WithTimeout(10 * time.Second).
			Should(ContainElement(HaveField("Exited", true)))

		c, err := dialFakeToken(path, uint64(tok)<<1|1)
		Expect(err).NotTo(HaveOccurred())
		defer c.close()
		Expect(c.slotU32(int(s), sState)).To(Equal(stListen), "the listener at the parent's slot")
		Expect(c.slotU32(int(s), sLPort)).To(Equal(port))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := gonet.Dial(ctx, pair.B, fmt.Sprintf("10.9.0.1:%d", port))
		Expect(err).NotTo(HaveOccurred(), "still listening")
		defer conn.Close()
		Expect(c.until(10*time.Second, func() bool { return c.slotU32(int(s), sAccq) == 1 })).To(BeTrue())
		_, errno, _, _ = c.call(opAccept, int(s), 0, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		st := srv.Stats().Server
		Expect(st.Forks).To(BeEquivalentTo(1))
		Expect(st.ForkChildren).To(BeEquivalentTo(1))
		Expect(st.Inherited).To(BeEquivalentTo(1))

		u, err := dialFakeToken(path, 12345)
		Expect(err).NotTo(HaveOccurred(), "an unknown token: a fresh process")
		defer u.close()
		Eventually(func() uint64 { return srv.Stats().Server.ForkUnknown }).Should(BeEquivalentTo(1))
	})

	It("refuses a hello of another version, and counts it", func() {
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		_, err = c.Write([]byte{0x53, 0x56, 0x50, 0x4c, 9, 0, 0, 0, 0, 0, 0, 0})
		Expect(err).NotTo(HaveOccurred())
		b := make([]byte, answerLen)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadFull(c, b)
		Expect(err).NotTo(HaveOccurred())
		Expect(unix.Errno(b[8])).To(Equal(unix.EPROTONOSUPPORT))
		Eventually(func() uint64 { return srv.Stats().Server.BadHellos }).Should(BeEquivalentTo(1))
		Expect(srv.Stats().Server.LastBadHello).To(ContainSubstring("version 9"))
	})
})
