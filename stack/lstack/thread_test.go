package lstack_test

import (
	"bytes"
	"errors"
	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/internal/costops"
	"io"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/sockring"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// handoffs is a ring's hand-off that notes each producer's clock and
// passes it on to the rig's.
type handoffs struct {
	h  *simhost.Handoff
	at *[]time.Duration
}

func (r *handoffs) Handoff(ring *sockring.Ring, tail uint64, at time.Duration) {
	*r.at = append(*r.at, at)
	r.h.Handoff(ring, tail, at)
}

func (r *handoffs) CatchUp(ring *sockring.Ring, now time.Duration) { r.h.CatchUp(ring, now) }

// notingHandoffs are the rig's hand-offs of a bridge, those to the
// application noting each producer's clock.
type notingHandoffs struct {
	*simhost.BridgeHandoffs
	eng *sim.Engine
	at  *[]time.Duration
}

func (n notingHandoffs) ToApp(wake func(time.Duration)) sockring.Handoff {
	return &handoffs{h: simhost.NewHandoff(n.eng, wake), at: n.at}
}

// modeNode is a host whose instance runs in a given mode, on 1024-entry
// rings with IPv4 and TCP checksums offloaded.
func modeNode(eng *sim.Engine, id uint16, name, addr string, mode lstack.Mode) (*lstack.Instance, *sim.Core, *nic.Port) {
	h, err := simhost.NewHost(eng, simhost.HostConfig{
		NIC: simhost.NICConfig{Name: name, ID: id,
			TxOffloads: hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum,
			RxOffloads: hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum,
			RxRing:     1024, TxRing: 1024, Mbufs: 4096},
		Address: addr, Mode: mode, TCP: tcp.DefaultConfig(), CPU: int(id),
	})
	Expect(err).NotTo(HaveOccurred())
	return h.Instance, h.Core, h.Port
}

// echoThread is an application thread on a core of its own: it echoes
// what it reads after work of CPU time, then sleeps on the socket.
type echoThread struct {
	core  *sim.Core
	sock  *lstack.Socket
	work  time.Duration
	buf   []byte
	eof   bool
	wrote []time.Duration
}

func (e *echoThread) Poll(m hw.Meter) (bool, time.Duration) {
	if e.sock == nil || e.eof {
		return false, sim.Never
	}
	worked := false
	for {
		n, err := e.sock.Read(m, e.buf)
		if errors.Is(err, io.EOF) {
			e.sock.Close(m)
			e.eof = true
			return true, sim.Never
		}
		Expect(err).NotTo(HaveOccurred())
		if n == 0 {
			break
		}
		worked = true
		m.Charge(appcost.Nanos, int64(e.work))
		_, err = e.sock.Write(m, e.buf[:n])
		Expect(err).NotTo(HaveOccurred())
		e.wrote = append(e.wrote, m.Now())
	}
	if !e.sock.Wait(m, e.core.Wake) {
		return true, sim.Never
	}
	return worked, sim.Never
}

// pinger sends one message at a time over a plain TCP connection and
// records when each echo is whole.
type pinger struct {
	in      *lstack.Instance
	c       *tcp.Conn
	msg     []byte
	left    int
	got     []byte
	sentAt  []time.Duration
	gotAt   []time.Duration
	started bool
	closed  bool
}

func (p *pinger) Poll(m hw.Meter) (bool, time.Duration) {
	if !p.started {
		p.started = true
		c, err := p.in.Connect(m, 0, tcp.AddrFrom4([4]byte{10, 0, 0, 1}, 3306))
		Expect(err).NotTo(HaveOccurred())
		p.c = c
		return true, sim.Never
	}
	if !p.c.Connected() || p.closed {
		return false, sim.Never
	}
	if len(p.sentAt) == len(p.gotAt) {
		if p.left == 0 {
			p.closed = true
			_ = p.in.Close(m, p.c)
			return true, sim.Never
		}
		rest, err := p.in.WriteAvailable(m, p.c, p.msg)
		Expect(err).NotTo(HaveOccurred())
		Expect(rest).To(BeEmpty())
		p.sentAt = append(p.sentAt, m.Now())
		p.left--
		return true, sim.Never
	}
	before := len(p.got)
	var err error
	p.got, _, err = p.in.ReadAvailable(m, p.c, p.got)
	Expect(err).NotTo(HaveOccurred())
	if len(p.got) >= len(p.msg)*(len(p.gotAt)+1) {
		p.gotAt = append(p.gotAt, m.Now())
	}
	return len(p.got) > before, sim.Never
}

type threadBed struct {
	eng    *sim.Engine
	stack  *sim.Core
	app    *sim.Core
	bridge *lstack.Bridge
	router *lstack.Router
	thread *echoThread
	ping   *pinger
}

func newThreadBed(mode lstack.Mode, work time.Duration, n int) *threadBed {
	eng := sim.NewEngine(5)
	sin, score, sport := modeNode(eng, 0, "server", "10.0.0.1/24", mode)
	cin, ccore, cport := modeNode(eng, 1, "client", "10.0.0.2/24", lstack.ModeLstack)
	_, err := nic.NewLink(eng, "wire", sport, cport, nic.LinkConfig{Latency: 10 * time.Microsecond})
	Expect(err).NotTo(HaveOccurred())
	tb := &threadBed{eng: eng, stack: score, router: lstack.NewRouter(3)}
	tb.app = sim.NewCore(eng, 7, 0, cost.For(costops.Table()).Default().Prices(2.6), false)
	tb.thread = &echoThread{core: tb.app, work: work, buf: make([]byte, 4096)}
	tb.app.Attach(tb.thread)
	tb.bridge, err = lstack.NewBridge(sin, tb.router, score.Wake)
	Expect(err).NotTo(HaveOccurred())
	Expect(tb.bridge.Listen(3306, 16, func(fd int, s *lstack.Socket) {
		tb.thread.sock = s
		tb.app.Wake(eng.Now())
	})).To(Succeed())
	simhost.BindBridge(eng, score, tb.bridge)
	tb.ping = &pinger{in: cin, msg: bytes.Repeat([]byte("q"), 200), left: n}
	ccore.Attach(tb.ping)
	eng.RunUntil(50 * time.Millisecond)
	return tb
}

var _ = Describe("application threads off the stack's lcore (the asymmetric model)", func() {
	DescribeTable("echo every message intact through the rings",
		func(mode lstack.Mode) {
			tb := newThreadBed(mode, 20*time.Microsecond, 50)
			Expect(tb.ping.gotAt).To(HaveLen(50))
			Expect(tb.ping.got).To(Equal(bytes.Repeat([]byte("q"), 200*50)))
			Expect(tb.thread.eof).To(BeTrue())
			st := tb.bridge.Stats()
			Expect(st.Accepted).To(BeEquivalentTo(1))
			Expect(st.SendBytes).To(BeEquivalentTo(200 * 50))
			Expect(st.RecvBytes).To(BeEquivalentTo(200 * 50))
			Expect(st.Closed).To(BeEquivalentTo(1))
			Expect(tb.router.Len()).To(BeZero(), "the fd is gone once closed")
		},
		Entry("lstack", lstack.ModeLstack),
		Entry("kernel", lstack.ModeKernel),
	)

	It("charges an lstack thread ring operations and no system call but its futex sleeps", func() {
		tb := newThreadBed(lstack.ModeLstack, 20*time.Microsecond, 50)
		app := tb.app.Stats().Ops
		sock := tb.thread.sock.Stats()
		Expect(app[lstack.CostSocketCall]).To(BeEquivalentTo(sock.Reads + sock.Writes + 1)) // + close
		Expect(app[lstack.CostRingOp]).To(BeNumerically(">=", 2*50))
		Expect(app[hw.CostSyscall]).To(BeEquivalentTo(sock.Sleeps))
		Expect(app[hw.CostSyscallFutex]).To(BeEquivalentTo(sock.Sleeps))
		Expect(app[cost.KernelCopyByte]).To(BeZero())
		// The stack thread wakes the sleeping thread: a futex wake each.
		stack := tb.stack.Stats().Ops
		Expect(tb.bridge.Stats().Wakeups).To(BeNumerically(">=", 50))
		Expect(stack[hw.CostWakeup]).To(BeEquivalentTo(tb.bridge.Stats().Wakeups))
		Expect(stack[hw.CostSyscallFutex]).To(BeEquivalentTo(tb.bridge.Stats().Wakeups))
	})

	It("makes a kernel thread's socket calls system calls with copies to and from the kernel", func() {
		tb := newThreadBed(lstack.ModeKernel, 20*time.Microsecond, 50)
		app := tb.app.Stats().Ops
		sock := tb.thread.sock.Stats()
		Expect(app[hw.CostSyscall]).To(BeEquivalentTo(sock.Reads + sock.Writes + 1 + sock.Sleeps))
		Expect(app[lstack.CostRingOp] + app[lstack.CostSocketCall] + app[hw.CostSyscallFutex]).To(BeZero())
		Expect(app[cost.KernelCopyByte]).To(BeEquivalentTo(2 * 200 * 50))
		stack := tb.stack.Stats().Ops
		Expect(stack[hw.CostWakeup]).To(BeEquivalentTo(tb.bridge.Stats().Wakeups))
		Expect(stack[hw.CostSyscallFutex]).To(BeZero())
	})

	// Linux runs a send's tcp_sendmsg -> tcp_push -> tcp_write_xmit ->
	// ip_queue_xmit in the caller's context (net/ipv4/tcp.c,
	// tcp_output.c): the segments of a kernel thread's writes are its
	// core's work, not the interrupt core's.
	It("charges a kernel thread's own segments on its core, not on the interrupt core", func() {
		tb := newThreadBed(lstack.ModeKernel, 20*time.Microsecond, 50)
		app := tb.app.Stats().Ops
		stack := tb.stack.Stats().Ops
		// 50 echoes and the FIN, each one segment sent by the thread's
		// write or close.
		Expect(app[cost.KernelTCPTx]).To(BeNumerically(">=", 51))
		Expect(app[cost.KernelIPTx]).To(Equal(app[cost.KernelTCPTx]))
		// What is left on the interrupt core is what no call sent: the
		// SYN-ACK and the ACKs of what arrived with no reply to carry
		// them.
		Expect(stack[cost.KernelTCPTx]).To(BeNumerically("<", app[cost.KernelTCPTx]/4))
		Expect(stack[cost.KernelTCPRx]).To(BeNumerically(">=", 50))
	})

	It("charges the segments an ACK releases on the interrupt core", func() {
		tb := newBulkBed(lstack.ModeKernel, 256<<10)
		Expect(tb.sink.got).To(Equal(256 << 10))
		app := tb.app.Stats().Ops
		stack := tb.stack.Stats().Ops
		total := app[cost.KernelTCPTx] + stack[cost.KernelTCPTx]
		// 256 KiB is ~180 segments of 1460 bytes: the first flight (the
		// initial window) leaves from the thread's write, the rest as
		// the client's ACKs open the window, in softirq.
		Expect(total).To(BeNumerically(">=", (256<<10)/1460))
		Expect(app[cost.KernelTCPTx]).To(BeNumerically(">=", 5))
		Expect(stack[cost.KernelTCPTx]).To(BeNumerically(">", 2*app[cost.KernelTCPTx]))
	})

	It("charges every segment on the stack thread's lcore on lstack", func() {
		tb := newThreadBed(lstack.ModeLstack, 20*time.Microsecond, 50)
		Expect(tb.app.Stats().Ops[tcp.CostSegmentTx]).To(BeZero())
		Expect(tb.stack.Stats().Ops[tcp.CostSegmentTx]).To(BeNumerically(">=", 51))
	})

	It("never sends a reply before the thread wrote it, in the thread's time", func() {
		const work = 300 * time.Microsecond
		tb := newThreadBed(lstack.ModeLstack, work, 10)
		Expect(tb.ping.gotAt).To(HaveLen(10))
		for i := range tb.ping.gotAt {
			// 10 us of link each way, plus the thread's work.
			Expect(tb.ping.gotAt[i] - tb.ping.sentAt[i]).To(BeNumerically(">", work+20*time.Microsecond))
			Expect(tb.ping.gotAt[i]).To(BeNumerically(">", tb.thread.wrote[i]+10*time.Microsecond))
		}
	})

	It("never lets a thread read bytes before the stack thread wrote them, in the stack's time", func() {
		eng := sim.NewEngine(3)
		sin, score, sport := modeNode(eng, 0, "server", "10.0.0.1/24", lstack.ModeLstack)
		cin, ccore, cport := modeNode(eng, 1, "client", "10.0.0.2/24", lstack.ModeLstack)
		_, err := nic.NewLink(eng, "wire", sport, cport, nic.LinkConfig{Latency: 10 * time.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		b, err := lstack.NewBridge(sin, lstack.NewRouter(3), score.Wake)
		Expect(err).NotTo(HaveOccurred())
		simhost.BindBridge(eng, score, b)
		// The rig's hand-offs, noting the producer's clock of each.
		var ats []time.Duration
		b.SetHandoffs(notingHandoffs{BridgeHandoffs: simhost.NewBridgeHandoffs(eng), eng: eng, at: &ats})
		var sock *lstack.Socket
		Expect(b.Listen(3306, 4, func(_ int, s *lstack.Socket) { sock = s })).To(Succeed())
		ccore.Attach(&pinger{in: cin, msg: bytes.Repeat([]byte("q"), 200), left: 1})
		// Only the receive ring hands anything off: the spec writes nothing.
		for i := 0; i < 100000 && len(ats) == 0; i++ {
			Expect(eng.Step()).To(BeTrue())
		}
		Expect(ats).NotTo(BeEmpty())
		t := ats[0]
		Expect(eng.Now()).To(BeNumerically("<", t), "the stack thread's clock is ahead of the engine in its turn")
		buf := make([]byte, 4096)
		early := &hw.CountingMeter{Clock: t - 1}
		Expect(sock.Read(early, buf)).To(BeZero(), "a thread at t-1 sees nothing")
		Expect(sock.Readable()).To(BeTrue(), "but knows bytes are on their way")
		Expect(sock.Wait(early, func(time.Duration) {})).To(BeTrue(), "and sleeps")
		Expect(sock.Read(&hw.CountingMeter{Clock: t}, buf)).To(Equal(200), "a thread at t reads them")
	})

	It("refuses a write when the send ring is full", func() {
		eng := sim.NewEngine(1)
		sin, score, sport := modeNode(eng, 0, "server", "10.0.0.1/24", lstack.ModeLstack)
		cin, ccore, cport := modeNode(eng, 1, "client", "10.0.0.2/24", lstack.ModeLstack)
		_, err := nic.NewLink(eng, "wire", sport, cport, nic.LinkConfig{Latency: 10 * time.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		var sock *lstack.Socket
		b, err := lstack.NewBridge(sin, lstack.NewRouter(3), func(time.Duration) {})
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Listen(3306, 4, func(_ int, s *lstack.Socket) { sock = s })).To(Succeed())
		score.Attach(b)
		ccore.Attach(&pinger{in: cin, msg: []byte("x"), left: 1})
		eng.RunUntil(5 * time.Millisecond)
		Expect(sock).NotTo(BeNil())
		// The doorbell above rings nothing: the stack thread never
		// drains, so the ring fills.
		m := &hw.CountingMeter{Clock: eng.Now()}
		var full error
		took := 0
		chunk := bytes.Repeat([]byte("y"), 4096)
		for i := 0; i < 1000 && full == nil; i++ {
			var n int
			n, full = sock.Write(m, chunk)
			took += n
		}
		Expect(errors.Is(full, lstack.ErrRingFull)).To(BeTrue())
		Expect(sock.Stats().SendRingFull).To(BeEquivalentTo(1))
		Expect(took).To(BeNumerically("<=", lstack.RingBytes), "the ring holds what it took, no more")
	})

	It("refuses a bridge without its parts", func() {
		_, err := lstack.NewBridge(nil, lstack.NewRouter(3), func(time.Duration) {})
		Expect(err).To(HaveOccurred())
	})
})
