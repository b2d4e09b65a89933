package lstack_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
)

// catchUpBed is a bridge with one accepted socket, its doorbells noted,
// at a quiet instant t of the engine; the spec plays the application
// thread and the stack thread's polls with meters of its own clocks.
type catchUpBed struct {
	eng   *sim.Engine
	b     *lstack.Bridge
	sock  *lstack.Socket
	rings []time.Duration
	t     time.Duration
}

func newCatchUpBed() *catchUpBed {
	eng := sim.NewEngine(3)
	sin, score, sport := modeNode(eng, 0, "server", "10.0.0.1/24", lstack.ModeLstack)
	cin, ccore, cport := modeNode(eng, 1, "client", "10.0.0.2/24", lstack.ModeLstack)
	_, err := nic.NewLink(eng, "wire", sport, cport, nic.LinkConfig{Latency: 10 * time.Microsecond})
	Expect(err).NotTo(HaveOccurred())
	cb := &catchUpBed{eng: eng}
	cb.b, err = lstack.NewBridge(sin, lstack.NewRouter(3), func(at time.Duration) {
		cb.rings = append(cb.rings, at)
		score.Wake(at)
	})
	Expect(err).NotTo(HaveOccurred())
	simhost.BindBridge(eng, score, cb.b)
	Expect(cb.b.Listen(3306, 4, func(_ int, s *lstack.Socket) { cb.sock = s })).To(Succeed())
	ccore.Attach(&pinger{in: cin, msg: []byte("x"), left: 1})
	eng.RunUntil(time.Millisecond)
	Expect(cb.sock).NotTo(BeNil())
	cb.rings, cb.t = nil, eng.Now()
	return cb
}

// poll is one poll of the stack thread at its clock at; it returns the
// requests served.
func (cb *catchUpBed) poll(at time.Duration) uint64 {
	before := cb.b.Stats().SendRequests
	cb.b.Poll(&hw.CountingMeter{Clock: at})
	return cb.b.Stats().SendRequests - before
}

var _ = Describe("a stack thread's catch-up of its sockets' requests", func() {
	It("serves a request once the thread's clock passed its call, before the call's own event, which then rings nothing", func() {
		cb := newCatchUpBed()
		call := cb.t + 5*time.Microsecond
		Expect(cb.sock.Write(&hw.CountingMeter{Clock: call}, []byte("reply"))).To(Equal(5))
		Expect(cb.rings).To(Equal([]time.Duration{call}), "the call rings the stack thread's doorbell")
		Expect(cb.poll(call-1)).To(BeZero(), "a thread whose clock is before the call's sees nothing")
		Expect(cb.poll(call)).To(BeEquivalentTo(1), "a thread whose clock reached it serves it, though the engine has not")
		Expect(cb.eng.Now()).To(Equal(cb.t))
		Expect(cb.b.Stats().SendBytes).To(BeEquivalentTo(5))
		cb.eng.RunUntil(call + time.Microsecond)
		Expect(cb.rings).To(Equal([]time.Duration{call}), "its hand-offs' events found it delivered, and rang nothing")
	})

	It("serves a request whose call arrived once the bytes written after it arrive too", func() {
		cb := newCatchUpBed()
		first, second := cb.t+5*time.Microsecond, cb.t+8*time.Microsecond
		Expect(cb.sock.Write(&hw.CountingMeter{Clock: first}, []byte("abc"))).To(Equal(3))
		Expect(cb.sock.Write(&hw.CountingMeter{Clock: second}, []byte("de"))).To(Equal(2))
		Expect(cb.poll(cb.t+6*time.Microsecond)).To(BeZero(), "the call is there, the second write's bytes are not")
		Expect(cb.poll(cb.t + 7*time.Microsecond)).To(BeZero())
		Expect(cb.poll(second)).To(BeEquivalentTo(1), "their arrival makes the request ready")
		Expect(cb.b.Stats().SendBytes).To(BeEquivalentTo(5))
		Expect(cb.poll(second+time.Microsecond)).To(BeZero(), "served once")
	})

	It("serves a request its call's event delivered, at the thread's next poll", func() {
		cb := newCatchUpBed()
		call := cb.t + 5*time.Microsecond
		Expect(cb.sock.Write(&hw.CountingMeter{Clock: call}, []byte("reply"))).To(Equal(5))
		// The engine runs to the call's time: its event delivers it and
		// the stack core's turn serves it.
		before := cb.b.Stats().SendRequests
		cb.eng.RunUntil(call)
		Expect(cb.b.Stats().SendRequests - before).To(BeEquivalentTo(1))
		Expect(cb.rings).To(Equal([]time.Duration{call, call, call}), "the call's doorbell, then the events' of its bytes and itself")
	})
})
