package nic_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
)

// napiCore is a queue core that drains its ring at once, as the kernel
// path's does (nic.RxDrainer), and charges nothing.
type napiCore struct{ *sim.Core }

func (napiCore) DrainsRx() bool { return true }

var _ = Describe("a queue whose core drains the ring (Linux's NAPI)", func() {
	It("holds a burst larger than the ring on its backlog, in order, and drops nothing", func() {
		eng := sim.NewEngine(1)
		mem := newTestMem(1<<20, 1)
		a, txPool := newPort(eng, mem, 0, "a", defaultOpts())
		bo := defaultOpts()
		bo.rxRing, bo.mbufs = 512, 2048
		b, _ := newPort(eng, mem, 1, "b", bo)
		_, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
		Expect(err).NotTo(HaveOccurred())
		src := &source{port: a, pool: txPool, frames: func(i int) []byte { return udpFrame(64, uint32(i)) }, total: 1000, retry: 200 * time.Nanosecond}
		ca := zeroCore(eng, 0)
		Expect(a.BindQueue(0, ca)).To(Succeed())
		ca.Attach(src)
		Expect(b.BindQueue(0, napiCore{zeroCore(eng, 1)})).To(Succeed())
		eng.Run()
		st := b.Stats()
		Expect(st.IMissed).To(BeZero())
		Expect(st.IPackets).To(Equal(uint64(1000)))
		Expect(b.RxQueueCount(0)).To(Equal(1000))
		Expect(b.RxQueueStats(0).BacklogPeak).To(Equal(uint64(1000)))
		// Bursts return the frames in arrival order.
		pkts := make([]*hw.Mbuf, 32)
		prev := int64(-1)
		for got := 0; got < 1000; {
			n := b.RxBurst(0, pkts)
			Expect(n).To(BeNumerically(">", 0))
			for _, m := range pkts[:n] {
				Expect(m.Timestamp).To(BeNumerically(">=", prev))
				prev = m.Timestamp
				m.Free()
			}
			got += n
		}
		Expect(b.RxQueueCount(0)).To(BeZero())
	})

	It("frees what the backlog holds at Stop, counted in rx_flushed_at_stop", func() {
		eng := sim.NewEngine(1)
		mem := newTestMem(1<<20, 1)
		a, txPool := newPort(eng, mem, 0, "a", defaultOpts())
		bo := defaultOpts()
		bo.rxRing = 128
		b, _ := newPort(eng, mem, 1, "b", bo)
		_, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
		Expect(err).NotTo(HaveOccurred())
		src := &source{port: a, pool: txPool, frames: func(i int) []byte { return udpFrame(64, uint32(i)) }, total: 300, retry: 200 * time.Nanosecond}
		ca := zeroCore(eng, 0)
		Expect(a.BindQueue(0, ca)).To(Succeed())
		ca.Attach(src)
		Expect(b.BindQueue(0, napiCore{zeroCore(eng, 1)})).To(Succeed())
		eng.Run()
		Expect(b.Stop()).To(Succeed())
		Expect(b.Counters().RxFlushed).To(Equal(uint64(300)))
		Expect(b.RxQueueCount(0)).To(BeZero())
	})
})
