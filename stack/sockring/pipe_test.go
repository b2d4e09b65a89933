package sockring_test

import (
	"errors"
	"io"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/sockring"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// A pipe between a server instance's stack thread and an application
// driven by the spec, against a plain TCP client, in virtual time.

type wakes struct {
	core                *sim.Core
	kicks, reads, wrote int
}

func (w *wakes) Kick()     { w.kicks++; w.core.Wake(w.core.Now()) }
func (w *wakes) Readable() { w.reads++ }
func (w *wakes) Writable() { w.wrote++ }

// service is the stack thread's side: it attaches the first accepted
// connection to the pipe and serves it every turn.
type service struct {
	ln       *tcp.Listener
	p        *sockring.Pipe
	direct   bool
	st       sockring.ServiceStats
	finished bool
}

func (s *service) Poll(m hw.Meter) (bool, time.Duration) {
	if s.p.Conn() == nil {
		c, ok := s.ln.Accept()
		if !ok {
			return false, m.Now() + 10*time.Microsecond
		}
		s.p.Attach(c, s.direct)
	}
	if !s.finished {
		s.finished = s.p.Service(&s.st)
	}
	return false, m.Now() + 10*time.Microsecond
}

type pipeBed struct {
	eng      *sim.Engine
	srv, cli *simhost.Host
	svc      *service
	drv      *wakes
	cc       *tcp.Conn
}

func newPipeBed(rxRing int, direct bool) *pipeBed {
	eng := sim.NewEngine(3)
	srv, err := simhost.NewHost(eng, simhost.HostConfig{NIC: simhost.NICConfig{Name: "server", ID: 1}, Address: "10.0.0.1/24"})
	Expect(err).NotTo(HaveOccurred())
	cli, err := simhost.NewHost(eng, simhost.HostConfig{NIC: simhost.NICConfig{Name: "client", ID: 2}, Address: "10.0.0.2/24", CPU: 1})
	Expect(err).NotTo(HaveOccurred())
	_, err = nic.NewLink(eng, "wire", srv.Port, cli.Port, nic.LinkConfig{Latency: 10 * time.Microsecond})
	Expect(err).NotTo(HaveOccurred())
	ln, err := srv.Instance.Listen(3306, 4)
	Expect(err).NotTo(HaveOccurred())
	b := &pipeBed{eng: eng, srv: srv, cli: cli, drv: &wakes{core: srv.Core}}
	clock := func() time.Duration { return srv.Core.Now() }
	p := sockring.New(sockring.Config{RxRing: rxRing, TxRing: 1 << 16, Clock: clock,
		RxHandoff: simhost.NewHandoff(eng, nil), TxHandoff: simhost.NewHandoff(eng, srv.Core.Wake)}, b.drv)
	b.svc = &service{ln: ln, p: p, direct: direct}
	srv.Core.AttachAs(simhost.LayerStack, b.svc)
	b.cc, err = cli.Instance.TCP().Connect(eng.Now(), tcp.AddrFrom4([4]byte{10, 0, 0, 2}, 40000), tcp.AddrFrom4([4]byte{10, 0, 0, 1}, 3306))
	Expect(err).NotTo(HaveOccurred())
	b.run(time.Millisecond)
	Expect(p.Conn()).NotTo(BeNil())
	return b
}

// run lets d of virtual time pass, the client's output flushed first.
func (b *pipeBed) run(d time.Duration) {
	b.cli.Core.Wake(b.eng.Now())
	b.eng.RunUntil(b.eng.Now() + d)
}

// send writes all of p from the client, as TCP's send buffer takes it.
func (b *pipeBed) send(p []byte) {
	for i := 0; len(p) > 0 && i < 10000; i++ {
		n, err := b.cc.Write(p)
		if err != nil && !errors.Is(err, tcp.ErrWouldBlock) {
			Fail(err.Error())
		}
		p = p[n:]
		b.run(50 * time.Microsecond)
	}
	Expect(p).To(BeEmpty())
}

// readAll reads what the application can now, until would-block or an
// end; it returns the bytes and the error that stopped it.
func (b *pipeBed) readAll() ([]byte, error) {
	var got []byte
	buf := make([]byte, 512)
	for {
		n, err := b.svc.p.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return got, err
		}
	}
}

var _ = Describe("a connection's pipe between the stack thread and its application", func() {
	DescribeTable("delivers the bytes, then the end of the stream",
		func(direct bool) {
			b := newPipeBed(1<<16, direct)
			b.send([]byte("hello"))
			Expect(b.cc.CloseWrite()).To(Succeed())
			b.run(time.Millisecond)
			got, err := b.readAll()
			Expect(string(got)).To(Equal("hello"))
			Expect(err).To(Equal(io.EOF))
			_, err = b.svc.p.Read(make([]byte, 8))
			Expect(err).To(Equal(io.EOF), "EOF stays")
		},
		Entry("through TCP's buffer", false),
		Entry("straight into the ring", true),
	)

	It("half-closes: a FIN after the bytes written, reading goes on", func() {
		b := newPipeBed(1<<16, true)
		_, err := b.svc.p.Write([]byte("bye"), b.srv.Core.Now(), false)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.svc.p.CloseWrite()).To(Succeed())
		_, err = b.svc.p.Write([]byte("more"), b.srv.Core.Now(), false)
		Expect(err).To(MatchError(sockring.ErrShutdown))
		b.run(time.Millisecond)
		buf := make([]byte, 16)
		n, _ := b.cc.Read(buf)
		Expect(string(buf[:n])).To(Equal("bye"))
		_, err = b.cc.Read(buf)
		Expect(err).To(Equal(io.EOF))
		b.send([]byte("still reading"))
		b.run(time.Millisecond)
		got, err := b.readAll()
		Expect(string(got)).To(Equal("still reading"))
		Expect(err).To(MatchError(sockring.ErrWouldBlock))
	})

	It("aborts a close that leaves received bytes unread (RFC 2525 2.17)", func() {
		b := newPipeBed(1<<16, true)
		b.send([]byte("unread"))
		b.run(time.Millisecond)
		Expect(b.svc.p.Close()).To(BeTrue())
		Expect(b.svc.p.Close()).To(BeFalse())
		b.run(time.Millisecond)
		Expect(b.svc.finished).To(BeTrue())
		Expect(b.srv.Instance.TCP().Stats().OutRsts).To(BeEquivalentTo(1))
		Expect(b.cc.Err()).To(MatchError(tcp.ErrConnReset))
	})

	It("closes with a FIN when everything was read", func() {
		b := newPipeBed(1<<16, true)
		b.send([]byte("read"))
		b.run(time.Millisecond)
		got, _ := b.readAll()
		Expect(string(got)).To(Equal("read"))
		Expect(b.svc.p.Close()).To(BeTrue())
		b.run(time.Millisecond)
		Expect(b.srv.Instance.TCP().Stats().OutRsts).To(BeZero())
		_, err := b.cc.Read(make([]byte, 8))
		Expect(err).To(Equal(io.EOF))
	})

	It("back-pressures a full receive ring without losing a byte", func() {
		b := newPipeBed(1024, false)
		want := make([]byte, 48<<10)
		for i := range want {
			want[i] = byte(i * 7)
		}
		b.send(want)
		b.run(time.Millisecond)
		Expect(b.svc.st.RecvRingFull).To(BeNumerically(">", 0))
		Expect(b.svc.p.Rx().Len()).To(Equal(1024))
		var got []byte
		for i := 0; len(got) < len(want) && i < 1000; i++ {
			p, _ := b.readAll()
			got = append(got, p...)
			b.run(100 * time.Microsecond)
		}
		Expect(got).To(Equal(want))
		Expect(b.drv.kicks).To(BeNumerically(">", 0), "the reader kicked the stalled stack thread")
	})
})
