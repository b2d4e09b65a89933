package testpmd_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/testpmd"
	"github.com/savanna-sim/savanna/internal/simhost"
)

// swapped returns f with its destination and source MACs exchanged.
func swapped(f []byte) []byte {
	s := append([]byte(nil), f...)
	copy(s[0:6], f[6:12])
	copy(s[6:12], f[0:6])
	return s
}

var _ = Describe("Forwarder", func() {
	DescribeTable("in macswap mode sends every frame back with its MACs swapped and nothing else changed, in order",
		func(cfg testpmd.Config) {
			b := newBench(simhost.NICConfig{})
			f := b.forward(cfg)
			sent := b.frames(200)
			b.probe.send(sent)
			b.eng.RunUntil(time.Millisecond)
			Expect(b.probe.got).To(HaveLen(len(sent)))
			for i := range sent {
				Expect(b.probe.got[i]).To(Equal(swapped(sent[i])), "frame %d", i)
			}
			Expect(f.Stats(b.eng.Now())).To(Equal(testpmd.Stats{RxPackets: 200, TxPackets: 200}))
		},
		Entry("named", testpmd.Config{Forward: testpmd.ModeMACSwap}),
		Entry("by default", testpmd.Config{}),
	)

	It("in io mode sends every frame back unchanged, in order", func() {
		b := newBench(simhost.NICConfig{})
		f := b.forward(testpmd.Config{Forward: testpmd.ModeIO})
		sent := b.frames(200)
		b.probe.send(sent)
		b.eng.RunUntil(time.Millisecond)
		Expect(b.probe.got).To(Equal(sent))
		Expect(f.Stats(b.eng.Now())).To(Equal(testpmd.Stats{RxPackets: 200, TxPackets: 200}))
	})

	It("counts as tx_dropped, and frees, each frame the full tx ring refused", func() {
		// A backlog of 1024 frames waits on the rx ring before the
		// forwarder starts; it drains them faster than the link sends,
		// so its 128-descriptor tx ring fills.
		const backlog, txRing = 1024, 128
		b := newBench(simhost.NICConfig{RxRing: backlog, TxRing: txRing})
		frames := b.frames(backlog)
		for i := range frames {
			frames[i] = frames[i][:60]
		}
		b.probe.send(frames)
		b.eng.RunUntil(200 * time.Microsecond)
		Expect(b.dut.Port.RxQueueCount(0)).To(Equal(backlog))
		f := b.forward(testpmd.Config{})
		b.eng.RunUntil(time.Millisecond)
		s := f.Stats(b.eng.Now())
		Expect(s.RxPackets).To(BeEquivalentTo(backlog))
		Expect(s.TxDropped).To(BeNumerically(">", 0))
		Expect(s.TxPackets).To(BeNumerically(">=", txRing))
		Expect(s.TxPackets + s.TxDropped).To(Equal(s.RxPackets))
		Expect(b.dut.Port.Counters().OPackets).To(Equal(s.TxPackets))
		Expect(b.dut.Port.Counters().TxRingFull).To(BeNumerically(">", 0))
		Expect(b.probe.got).To(HaveLen(int(s.TxPackets)))
		// Nothing leaks: once the ring's sent frames are reclaimed,
		// every mbuf is back in the pool.
		b.dut.Port.TxDoneCleanup(0)
		Expect(b.dut.Pools[0].Stats().InUse).To(BeZero())
	})

	It("ResetStats zeroes the counters, which count again from there", func() {
		b := newBench(simhost.NICConfig{})
		f := b.forward(testpmd.Config{})
		b.probe.send(b.frames(100))
		b.eng.RunUntil(time.Millisecond)
		Expect(f.Stats(b.eng.Now()).RxPackets).To(BeEquivalentTo(100))
		f.ResetStats(b.eng.Now())
		Expect(f.Stats(b.eng.Now())).To(Equal(testpmd.Stats{}))
		b.probe.send(b.frames(30))
		b.eng.RunUntil(2 * time.Millisecond)
		Expect(f.Stats(b.eng.Now())).To(Equal(testpmd.Stats{RxPackets: 30, TxPackets: 30}))
		Expect(b.probe.got).To(HaveLen(130))
	})

	It("refuses a forwarding mode it does not have, naming the key", func() {
		cfg := testpmd.Config{Forward: "5tuple"}
		Expect(cfg.Validate()).To(MatchError(HavePrefix("forward:")))
		_, err := testpmd.New(cfg, nil, 0)
		Expect(err).To(MatchError(HavePrefix("forward:")))
	})
})
