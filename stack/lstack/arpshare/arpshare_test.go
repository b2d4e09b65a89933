package arpshare_test

import (
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/stack/lstack/arpshare"
)

// arpFrame is an ARP request (RFC 826) for 10.1.0.1 from 10.1.0.9,
// padded to the minimum frame.
func arpFrame() []byte {
	f := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 9, 0x08, 0x06,
		0, 1, 0x08, 0x00, 6, 4, 0, 1, 2, 0, 0, 0, 0, 9, 10, 1, 0, 9,
		0, 0, 0, 0, 0, 0, 10, 1, 0, 1}
	return append(f, make([]byte, 18)...)
}

// ipv4Frame is an untagged frame carrying IPv4 (EtherType 0x0800).
func ipv4Frame() []byte {
	f := arpFrame()
	f[12], f[13] = 0x08, 0x00
	return f
}

// harness runs a group's members the way one driver does: each member's
// turns (on which it shares what it receives and drains what it was
// given) and the notify policy that asks for a peer's turn.
type harness interface {
	// share runs Share on member from's turn and returns its result.
	share(from int, now time.Duration, m *hw.Mbuf) int
	// settle lets the members that were woken take their turns.
	settle()
	// received returns the frames member i has handled, each on its
	// own turn.
	received(i int) [][]byte
	// wakes returns the times member i was woken at.
	wakes(i int) []time.Duration
	// offTurn counts frames handled outside their member's turn.
	offTurn() int64
	stop()
}

// recorder is what both harnesses keep per member.
type recorder struct {
	mu    sync.Mutex
	got   [][]byte
	woken []time.Duration
}

func (r *recorder) frames() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.got...)
}

func (r *recorder) times() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.woken...)
}

// virtualTime is the virtual-time driver's policy: one goroutine polls
// every member; a wake asks for the member's turn at a time, which the
// engine (settle here) gives it later.
type virtualTime struct {
	g       *arpshare.Group
	rec     []*recorder
	due     []bool
	current int
	off     int64
}

func newVirtualTime(pools []hw.Mempool) harness {
	h := &virtualTime{rec: make([]*recorder, len(pools)), due: make([]bool, len(pools)), current: -1}
	ms := make([]arpshare.Member, len(pools))
	for i, p := range pools {
		h.rec[i] = &recorder{}
		ms[i] = arpshare.Member{Pool: p, Wake: func(at time.Duration) {
			h.rec[i].woken = append(h.rec[i].woken, at)
			h.due[i] = true
		}}
	}
	h.g = arpshare.New(ms)
	return h
}

func (h *virtualTime) turn(i int, fn func()) {
	h.current = i
	defer func() { h.current = -1 }()
	fn()
	h.g.Drain(i, func(m *hw.Mbuf) {
		if h.current != i {
			h.off++
		}
		h.rec[i].got = append(h.rec[i].got, append([]byte(nil), m.Data()...))
		m.Free()
	})
}

func (h *virtualTime) share(from int, now time.Duration, m *hw.Mbuf) int {
	var n int
	h.turn(from, func() { n = h.g.Share(from, now, m) })
	return n
}

func (h *virtualTime) settle() {
	for i, d := range h.due {
		if d {
			h.due[i] = false
			h.turn(i, func() {})
		}
	}
}

func (h *virtualTime) received(i int) [][]byte     { return h.rec[i].frames() }
func (h *virtualTime) wakes(i int) []time.Duration { return h.rec[i].times() }
func (h *virtualTime) offTurn() int64              { return h.off }
func (h *virtualTime) stop()                       {}

// realTime is the real-time driver's policy: a goroutine per member
// (its lcore) that parks until woken, then drains; work for a member's
// turn is handed to its goroutine.
type realTime struct {
	g     *arpshare.Group
	rec   []*recorder
	wake  []chan struct{}
	tasks []chan func()
	on    []atomic.Bool
	off   atomic.Int64
	quit  chan struct{}
	wg    sync.WaitGroup
}

func newRealTime(pools []hw.Mempool) harness {
	k := len(pools)
	h := &realTime{rec: make([]*recorder, k), wake: make([]chan struct{}, k), tasks: make([]chan func(), k),
		on: make([]atomic.Bool, k), quit: make(chan struct{})}
	ms := make([]arpshare.Member, k)
	for i, p := range pools {
		h.rec[i] = &recorder{}
		h.wake[i] = make(chan struct{}, 1)
		h.tasks[i] = make(chan func())
		ms[i] = arpshare.Member{Pool: p, Wake: func(at time.Duration) {
			h.rec[i].mu.Lock()
			h.rec[i].woken = append(h.rec[i].woken, at)
			h.rec[i].mu.Unlock()
			select {
			case h.wake[i] <- struct{}{}:
			default:
			}
		}}
	}
	h.g = arpshare.New(ms)
	for i := range pools {
		h.wg.Add(1)
		go h.loop(i)
	}
	return h
}

func (h *realTime) loop(i int) {
	defer h.wg.Done()
	for {
		var fn func()
		select {
		case <-h.quit:
			return
		case <-h.wake[i]:
		case fn = <-h.tasks[i]:
		}
		h.on[i].Store(true)
		if fn != nil {
			fn()
		}
		h.g.Drain(i, func(m *hw.Mbuf) {
			if !h.on[i].Load() {
				h.off.Add(1)
			}
			h.rec[i].mu.Lock()
			h.rec[i].got = append(h.rec[i].got, append([]byte(nil), m.Data()...))
			h.rec[i].mu.Unlock()
			m.Free()
		})
		h.on[i].Store(false)
	}
}

func (h *realTime) share(from int, now time.Duration, m *hw.Mbuf) int {
	done := make(chan int)
	h.tasks[from] <- func() { done <- h.g.Share(from, now, m) }
	return <-done
}

func (h *realTime) settle()                     {}
func (h *realTime) received(i int) [][]byte     { return h.rec[i].frames() }
func (h *realTime) wakes(i int) []time.Duration { return h.rec[i].times() }
func (h *realTime) offTurn() int64              { return h.off.Load() }
func (h *realTime) stop() {
	close(h.quit)
	h.wg.Wait()
}

func newPool(name string, n int) *ringdev.Mempool {
	p, err := ringdev.NewMempool(name, n, 2048)
	Expect(err).NotTo(HaveOccurred())
	return p
}

func mbufWith(p hw.Mempool, b []byte) *hw.Mbuf {
	m := p.Get()
	Expect(m).NotTo(BeNil())
	Expect(m.SetData(b)).To(Succeed())
	return m
}

// The behaviours of the mechanism, run under each driver's policy.
func behaves(newHarness func([]hw.Mempool) harness) {
	var (
		pools []*ringdev.Mempool
		h     harness
		rx    *ringdev.Mempool // the sender's receive pool
	)
	const now = 7 * time.Millisecond
	eventually := func(f any) AsyncAssertion {
		return Eventually(f).WithTimeout(5 * time.Second).WithPolling(time.Millisecond)
	}

	BeforeEach(func() {
		pools = []*ringdev.Mempool{newPool("q0", 8), newPool("q1", 8), newPool("q2", 8)}
		rx = newPool("rx", 8)
		h = newHarness([]hw.Mempool{pools[0], pools[1], pools[2]})
		DeferCleanup(func() { h.stop() })
	})

	It("copies an ARP frame to every peer, from the peer's own pool, and wakes each at the sharer's time", func() {
		m := mbufWith(rx, arpFrame())
		Expect(h.share(0, now, m)).To(Equal(2))
		h.settle()
		for _, peer := range []int{1, 2} {
			eventually(func() [][]byte { return h.received(peer) }).Should(Equal([][]byte{arpFrame()}))
			Expect(h.wakes(peer)).To(Equal([]time.Duration{now}))
		}
		Expect(pools[1].Stats().Gets).To(BeEquivalentTo(1))
		Expect(pools[2].Stats().Gets).To(BeEquivalentTo(1))
		eventually(func() int { return pools[1].Stats().InUse + pools[2].Stats().InUse }).Should(BeZero(), "the peer frees what it handled")
		m.Free()
	})

	It("hands nothing back to the sender and leaves it its frame", func() {
		m := mbufWith(rx, arpFrame())
		Expect(h.share(1, now, m)).To(Equal(2))
		h.settle()
		eventually(func() int { return len(h.received(0)) + len(h.received(2)) }).Should(Equal(2))
		Expect(h.received(1)).To(BeEmpty())
		Expect(h.wakes(1)).To(BeEmpty())
		Expect(pools[1].Stats().Gets).To(BeZero())
		Expect(m.RefCnt).To(BeEquivalentTo(1))
		Expect(m.Data()).To(Equal(arpFrame()))
		m.Free()
		Expect(rx.Stats().InUse).To(BeZero())
	})

	It("handles each copy on its peer's turn", func() {
		for i := 0; i < 20; i++ {
			m := mbufWith(rx, arpFrame())
			Expect(h.share(i%3, now, m)).To(Equal(2))
			m.Free()
			h.settle()
		}
		eventually(func() int { return len(h.received(0)) + len(h.received(1)) + len(h.received(2)) }).Should(Equal(40))
		Expect(h.offTurn()).To(BeZero())
	})

	It("shares nothing that is not ARP", func() {
		m := mbufWith(rx, ipv4Frame())
		Expect(h.share(0, now, m)).To(BeZero())
		h.settle()
		Expect(h.wakes(1)).To(BeEmpty())
		Expect(h.wakes(2)).To(BeEmpty())
		Expect(pools[1].Stats().Gets + pools[2].Stats().Gets).To(BeZero())
		m.Free()
	})

	It("counts a copy its pool refused as the peer's, and still serves the other peers", func() {
		var held []*hw.Mbuf
		for m := pools[1].Get(); m != nil; m = pools[1].Get() {
			held = append(held, m)
		}
		m := mbufWith(rx, arpFrame())
		Expect(h.share(0, now, m)).To(Equal(1))
		h.settle()
		eventually(func() [][]byte { return h.received(2) }).Should(HaveLen(1))
		Expect(h.wakes(1)).To(BeEmpty())
		g := groupOf(h)
		Expect(g.NoMbuf(1)).To(BeEquivalentTo(1))
		Expect(g.Dropped(1)).To(BeEquivalentTo(1))
		Expect(g.NoMbuf(2) + g.Dropped(2) + g.NoMbuf(0) + g.Dropped(0)).To(BeZero())
		g.ResetNoMbuf(1)
		Expect(g.NoMbuf(1)).To(BeZero())
		Expect(g.Dropped(1)).To(BeEquivalentTo(1), "drops are never reset")
		m.Free()
		for _, m := range held {
			m.Free()
		}
	})
}

// groupOf returns the harness's group.
func groupOf(h harness) *arpshare.Group {
	switch h := h.(type) {
	case *virtualTime:
		return h.g
	case *realTime:
		return h.g
	}
	return nil
}

var _ = Describe("ARP sharing between the instances of a port", func() {
	Describe("under the virtual-time driver's policy (one goroutine; a wake asks for a later turn)", func() {
		behaves(newVirtualTime)
	})
	Describe("under the real-time driver's policy (a goroutine per member, woken from the sharer's)", func() {
		behaves(newRealTime)
	})

	It("defers a copy to the peer's turn: nothing is handled while the sharer runs", func() {
		h := newVirtualTime([]hw.Mempool{newPool("a", 4), newPool("b", 4)}).(*virtualTime)
		rx := newPool("rx", 4)
		m := mbufWith(rx, arpFrame())
		Expect(h.share(0, time.Second, m)).To(Equal(1))
		Expect(h.received(1)).To(BeEmpty())
		h.settle()
		Expect(h.received(1)).To(HaveLen(1))
		m.Free()
	})

	It("drops and counts a copy when the peer's ring from the sharer is full, freeing it", func() {
		a, b := newPool("a", 4), newPool("b", arpshare.RingSize+8)
		g := arpshare.New([]arpshare.Member{{Pool: a}, {Pool: b}})
		rx := newPool("rx", 4)
		m := mbufWith(rx, arpFrame())
		for i := 0; i < arpshare.RingSize; i++ {
			Expect(g.Share(0, 0, m)).To(Equal(1))
		}
		Expect(g.Share(0, 0, m)).To(BeZero())
		Expect(g.Dropped(1)).To(BeEquivalentTo(1))
		Expect(g.NoMbuf(1)).To(BeZero(), "the pool did not refuse it")
		Expect(b.Stats().InUse).To(Equal(arpshare.RingSize))
		n := g.Drain(1, func(c *hw.Mbuf) { c.Free() })
		Expect(n).To(Equal(arpshare.RingSize))
		Expect(b.Stats().InUse).To(BeZero())
		m.Free()
	})

	It("shares a VLAN-tagged ARP frame, and a chained one whole", func() {
		a, b := newPool("a", 4), newPool("b", 4)
		g := arpshare.New([]arpshare.Member{{Pool: a}, {Pool: b}})
		rx := newPool("rx", 4)
		f := arpFrame()
		tagged := append(append(append([]byte(nil), f[:12]...), 0x81, 0x00, 0x00, 0x07), f[12:]...)
		m := mbufWith(rx, tagged)
		Expect(g.Share(0, 0, m)).To(Equal(1))
		m.Free()
		head, tail := mbufWith(rx, f[:20]), mbufWith(rx, f[20:])
		head.Next, head.NbSegs, head.PktLen = tail, 2, len(f)
		Expect(g.Share(0, 0, head)).To(Equal(1))
		head.Free()
		var got [][]byte
		g.Drain(1, func(c *hw.Mbuf) { got = append(got, append([]byte(nil), c.Data()...)); c.Free() })
		Expect(got).To(Equal([][]byte{tagged, f}))
		Expect(rx.Stats().InUse + b.Stats().InUse).To(BeZero())
	})

	It("keeps every frame two sharers send concurrently, or counts it dropped", func() {
		pools := []hw.Mempool{newPool("a", 64), newPool("b", 64), newPool("c", 64)}
		h := newRealTime(pools).(*realTime)
		defer h.stop()
		rxs := []*ringdev.Mempool{newPool("rx0", 4), newPool("rx1", 4)}
		const each = 500
		var wg sync.WaitGroup
		var shared atomic.Int64
		for from := 0; from < 2; from++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				for i := 0; i < each; i++ {
					m := mbufWith(rxs[from], arpFrame())
					shared.Add(int64(h.share(from, 0, m)))
					m.Free()
				}
			}()
		}
		wg.Wait()
		g := h.g
		Eventually(func() int64 {
			n := int64(0)
			for i := range pools {
				n += int64(len(h.received(i))) + int64(g.Dropped(i))
			}
			return n
		}).WithTimeout(10 * time.Second).Should(BeEquivalentTo(2 * 2 * each))
		got := int64(0)
		for i := range pools {
			got += int64(len(h.received(i)))
		}
		Expect(got).To(Equal(shared.Load()))
		Expect(h.offTurn()).To(BeZero())
		Eventually(func() int {
			n := 0
			for _, p := range pools {
				n += p.Stats().InUse
			}
			return n
		}).WithTimeout(5 * time.Second).Should(BeZero())
	})
})
