package rt_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

func newRuntime(cfg rt.Config) (*rt.Runtime, *ringdev.Port) {
	a, b, err := ringdev.NewPair(ringdev.Config{}, ringdev.Config{})
	Expect(err).NotTo(HaveOccurred())
	pool, err := ringdev.NewMempool("p", 4096, 2048)
	Expect(err).NotTo(HaveOccurred())
	r, err := rt.New(cfg, lstack.Config{Iface: iface.Config{Address: "10.1.0.1/24"}, TCP: tcp.DefaultConfig()}, a, pool)
	Expect(err).NotTo(HaveOccurred())
	return r, b
}

var _ = Describe("real-time driver", func() {
	It("runs tasks kicked from many goroutines on the lcore, each exactly once per kick round", func() {
		r, _ := newRuntime(rt.Config{NoLockOSThread: true})
		Expect(r.Start()).To(Succeed())
		defer r.Stop()
		lc := r.Lcores()[0]
		var ran atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 500; i++ {
					done := make(chan struct{})
					Expect(lc.Submit(func(*rt.Lcore) { ran.Add(1); close(done) })).To(Succeed())
					<-done
				}
			}()
		}
		wg.Wait()
		Expect(ran.Load()).To(BeEquivalentTo(4000))
	})

	It("runs the thread hook on each lcore's thread before its loop and its done function after", func() {
		var mu sync.Mutex
		var started, ended []int
		hook := func(lcore int) (func(), error) {
			mu.Lock()
			started = append(started, lcore)
			mu.Unlock()
			return func() {
				mu.Lock()
				ended = append(ended, lcore)
				mu.Unlock()
			}, nil
		}
		r, _ := newRuntime(rt.Config{NoLockOSThread: true, ThreadHook: hook})
		Expect(r.Start()).To(Succeed())
		mu.Lock()
		Expect(started).To(Equal([]int{0}))
		Expect(ended).To(BeEmpty())
		mu.Unlock()
		r.Stop()
		Expect(ended).To(Equal([]int{0}))
	})

	It("fails Start with the lcore named when the thread hook fails", func() {
		hook := func(int) (func(), error) { return nil, errors.New("no lcore slot") }
		r, _ := newRuntime(rt.Config{NoLockOSThread: true, ThreadHook: hook})
		Expect(r.Start()).To(MatchError(And(ContainSubstring("lcore 0"), ContainSubstring("no lcore slot"))))
		r.Stop()
	})

	It("parks an idle lcore and wakes it for work", func() {
		r, _ := newRuntime(rt.Config{NoLockOSThread: true, Spin: time.Microsecond})
		Expect(r.Start()).To(Succeed())
		defer r.Stop()
		lc := r.Lcores()[0]
		Eventually(func() uint64 { return r.Snapshot().Lcores[0].Driver.Parks }).WithTimeout(5 * time.Second).Should(BeNumerically(">", 0))
		done := make(chan struct{})
		Expect(lc.Submit(func(*rt.Lcore) { close(done) })).To(Succeed())
		Eventually(done).WithTimeout(5 * time.Second).Should(BeClosed())
		Expect(r.Snapshot().Lcores[0].Driver.Wakeups).To(BeNumerically(">", 0))
	})

	It("meters in real time: Now advances, Charge counts", func() {
		m := rt.NewMeter(time.Now())
		m.Charge(hw.CostCopyByte, 10)
		m.Charge(hw.CostCopyByte, 5)
		Expect(m.Count(hw.CostCopyByte)).To(BeZero(), "published once per loop turn")
		m.Publish()
		Expect(m.Count(hw.CostCopyByte)).To(BeEquivalentTo(15))
		m.Charge(hw.CostCopyByte, 1)
		m.Publish()
		Expect(m.Count(hw.CostCopyByte)).To(BeEquivalentTo(16))
		t0 := m.Now()
		Eventually(m.Now).Should(BeNumerically(">", t0))
	})

	It("fails requests after Stop instead of hanging", func() {
		r, _ := newRuntime(rt.Config{NoLockOSThread: true})
		Expect(r.Start()).To(Succeed())
		r.Stop()
		Expect(r.Lcores()[0].Submit(func(*rt.Lcore) {})).To(MatchError(rt.ErrStopped))
		Expect(r.Snapshot().Lcores).To(HaveLen(1))
	})

	// ARP frames reach the port on queue 0 (ringdev steers frames that
	// are not IP there); the runtime shares them between its lcores with
	// stack/lstack/arpshare, whose own spec covers the mechanism under
	// both drivers' policies. These check the runtime's wiring of it.
	It("hands ARP frames to every instance, not only the one on queue 0", func() {
		r, b := newRuntime(rt.Config{Lcores: 2, NoLockOSThread: true})
		send := peerSide(b)
		Expect(r.Start()).To(Succeed())
		defer r.Stop()
		send(arpRequest())
		Eventually(func() []uint64 {
			s := r.Snapshot()
			return []uint64{s.Lcores[0].Iface.ARP.RxRequests, s.Lcores[1].Iface.ARP.RxRequests}
		}).WithTimeout(5 * time.Second).Should(Equal([]uint64{1, 1}))
		s := r.Snapshot()
		Expect(s.Lcores[0].Stack.ARPShared).To(BeEquivalentTo(1), "lcore 0 shared it once")
		Expect(s.Lcores[1].Stack.ARPShared).To(BeZero(), "and got nothing back")
		Expect(s.Lcores[1].Stack.RxPackets).To(BeZero(), "the copy is not a received packet of lcore 1")
		Expect(s.ARPCopyDrops).To(BeZero())
		Expect(s.Lcores[0].Stack.NoMbuf + s.Lcores[1].Stack.NoMbuf).To(BeZero())
	})

	It("gives its lcores one TCP memory budget and one connection limit for the process (tcp_mem, max_connections)", func() {
		r, _ := newRuntime(rt.Config{Lcores: 2, NoLockOSThread: true})
		a, b := r.Lcores()[0].Instance().TCP(), r.Lcores()[1].Instance().TCP()
		Expect(a.MemBudget()).To(BeIdenticalTo(b.MemBudget()))
		Expect(a.MemBudget().Limits()).To(Equal(tcp.DefaultConfig().Mem))
		Expect(r.Snapshot().TCPMem.InUse).To(BeZero())
		// A connection opened on one lcore counts against the other's
		// limit: the budget is the process's.
		_, err := a.Connect(0, tcp.AddrFrom4(r.Addr(), 0), tcp.AddrFrom4([4]byte{10, 1, 0, 2}, 80))
		Expect(err).NotTo(HaveOccurred())
		Expect(b.NumConns()).To(BeZero())
		Expect(r.Lcores()[1].Instance().TCP().MemBudget().Stats().InUse).To(BeZero())
		r.Stop()
	})

	It("wakes a parked peer lcore for a shared ARP frame", func() {
		// The lcores park as long as their own deadlines allow, and the
		// spec watches only the far end (a Snapshot would wake them):
		// each instance answers the request, so a second reply means
		// lcore 1 was woken for its copy.
		r, b := newRuntime(rt.Config{Lcores: 2, NoLockOSThread: true, NoSpin: true, MaxPark: time.Hour})
		send := peerSide(b)
		Expect(r.Start()).To(Succeed())
		defer r.Stop()
		// Both have parked, so both have polled and sent their
		// gratuitous ARPs, which the far end drops.
		Eventually(func() []uint64 {
			s := r.Snapshot()
			return []uint64{min(s.Lcores[0].Driver.Parks, 1), min(s.Lcores[1].Driver.Parks, 1)}
		}).WithTimeout(5 * time.Second).Should(Equal([]uint64{1, 1}))
		drainARP(b)
		send(arpRequest())
		replies := 0
		Eventually(func() int { replies += drainARP(b); return replies }).WithTimeout(5 * time.Second).Should(Equal(2))
		Consistently(func() int { replies += drainARP(b); return replies }).WithTimeout(50 * time.Millisecond).Should(Equal(2))
	})

	DescribeTable("validates its configuration naming the key",
		func(cfg rt.Config, msg string) {
			Expect(cfg.Validate()).To(MatchError(ContainSubstring(msg)))
		},
		Entry("too many lcores", rt.Config{Lcores: 100}, "lcores: 100"),
		Entry("ring not a power of two", rt.Config{RxRing: 1000}, "rx_ring: 1000"),
		Entry("negative spin", rt.Config{Spin: -1}, "spin:"),
	)
})

// peerSide starts the far end of the ring pair and returns a function
// that sends one frame from it.
func peerSide(b *ringdev.Port) func([]byte) {
	pool, err := ringdev.NewMempool("peer", 64, 2048)
	Expect(err).NotTo(HaveOccurred())
	Expect(b.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1})).To(Succeed())
	Expect(b.SetupRxQueue(0, 64, pool)).To(Succeed())
	Expect(b.SetupTxQueue(0, 64)).To(Succeed())
	Expect(b.Start()).To(Succeed())
	return func(f []byte) {
		m := pool.Get()
		Expect(m.SetData(f)).To(Succeed())
		Expect(b.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1))
	}
}

// arpRequest is an ARP request (RFC 826) for 10.1.0.1 from 10.1.0.9,
// padded to the minimum frame.
func arpRequest() []byte {
	f := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 9, 0x08, 0x06,
		0, 1, 0x08, 0x00, 6, 4, 0, 1, 2, 0, 0, 0, 0, 9, 10, 1, 0, 9,
		0, 0, 0, 0, 0, 0, 10, 1, 0, 1}
	return append(f, make([]byte, 18)...)
}

// drainARP receives what reached the far end and returns how many of
// the frames were ARP.
func drainARP(b *ringdev.Port) int {
	rx := make([]*hw.Mbuf, 32)
	n := 0
	for got := b.RxBurst(0, rx); got > 0; got = b.RxBurst(0, rx) {
		for _, m := range rx[:got] {
			if f, err := ether.Check(m.Data()); err == nil && f.EtherType() == ether.TypeARP {
				n++
			}
			m.Free()
		}
	}
	return n
}
