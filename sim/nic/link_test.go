package nic_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
)

// pair is two ports joined by a link, with a source on a and a sink on b.
type pair struct {
	eng    *sim.Engine
	a, b   *nic.Port
	txPool *nic.Mempool
	link   *nic.Link
	src    *source
	dst    *sink
}

func newPair(seed uint64, ao, bo portOpts, cfg nic.LinkConfig, frames func(int) []byte, total int, drain bool) *pair {
	eng := sim.NewEngine(seed)
	mem := newTestMem(1<<20, 1)
	a, txPool := newPort(eng, mem, 0, "a", ao)
	b, _ := newPort(eng, mem, 1, "b", bo)
	l, err := nic.NewLink(eng, "ab", a, b, cfg)
	must(err)
	p := &pair{eng: eng, a: a, b: b, txPool: txPool, link: l}
	p.src = &source{port: a, pool: txPool, frames: frames, total: total, retry: 200 * time.Nanosecond}
	ca := zeroCore(eng, 0)
	must(a.BindQueue(0, ca))
	ca.Attach(p.src)
	p.dst = &sink{port: b}
	if drain {
		cb := zeroCore(eng, 1)
		must(b.BindQueue(0, cb))
		cb.Attach(p.dst)
	}
	return p
}

// conserved checks that every frame sent is received or counted by a
// drop counter somewhere.
func conserved(p *pair) {
	as, bs, ls := p.a.Counters(), p.b.Counters(), p.link.Stats()
	Expect(ls.AToB.Frames).To(Equal(as.OPackets), "link frames = sender opackets")
	Expect(ls.AToB.Frames+ls.AToB.Duplicated).To(Equal(ls.AToB.Delivered+ls.AToB.Lost+ls.AToB.DroppedLinkDown),
		"sent + duplicated = delivered + lost + dropped_link_down")
	Expect(ls.AToB.Delivered).To(Equal(bs.IPackets+bs.IMissed+bs.RxNoMbuf+bs.IErrors+bs.RxPortStopped),
		"delivered = ipackets + imissed + rx_nombuf + ierrors + rx_port_stopped_drops")
	Expect(uint64(p.src.sent)).To(Equal(as.OPackets+as.OErrors), "taken by TxBurst = opackets + oerrors")
}

var _ = Describe("Link", func() {
	DescribeTable("carries back-to-back frames at line rate",
		func(model string, size int, wantMpps float64) {
			ao, bo := defaultOpts(), defaultOpts()
			ao.model, bo.model = model, model
			ao.txRing, bo.rxRing = 4096, 4096
			ao.mbufs, bo.mbufs = 8192, 8192
			const n = 200_000
			frame := udpFrame(size, 0)
			p := newPair(1, ao, bo, nic.LinkConfig{Latency: time.Microsecond}, func(int) []byte { return frame }, n, true)
			p.eng.Run()
			Expect(p.dst.got).To(Equal(n))
			mpps := float64(n-1) / float64(p.dst.last-p.dst.first) * 1e3
			GinkgoWriter.Printf("%s %d-byte frames: %.4f Mpps\n", model, size, mpps)
			Expect(mpps).To(BeNumerically("~", wantMpps, wantMpps*0.001))
			conserved(p)
		},
		// 25e9 / ((64+20)*8) = 37.202 Mpps; 25e9 / ((1518+20)*8) = 2.0319 Mpps.
		Entry("64 B on 25G", "hi1822-25g", 64, 25e9/(84*8)/1e6),
		Entry("1518 B on 25G", "hi1822-25g", 1518, 25e9/(1538*8)/1e6),
		Entry("64 B on 10G", "x710-10g", 64, 14.880952),
		Entry("64 B on 100G", "e810-100g", 64, 148.80952),
	)

	It("quotes 37.2 Mpps and 2.03 Mpps on 25G", func() {
		Expect(25e9 / float64(nic.WireBytes(60)*8) / 1e6).To(BeNumerically("~", 37.2, 0.01))
		Expect(25e9 / float64(nic.WireBytes(1514)*8) / 1e6).To(BeNumerically("~", 2.03, 0.005))
		Expect(nic.WireBytes(10)).To(Equal(84)) // padded to the 64-byte minimum
	})

	It("drops exactly the surplus of a full rx ring, counted in imissed", func() {
		ao, bo := defaultOpts(), defaultOpts()
		bo.rxRing = 512
		frame := udpFrame(64, 0)
		p := newPair(1, ao, bo, nic.LinkConfig{}, func(int) []byte { return frame }, 1000, false)
		p.eng.Run()
		st := p.b.Stats()
		Expect(st.IPackets).To(Equal(uint64(512)))
		Expect(st.IMissed).To(Equal(uint64(488)))
		Expect(st.QErrors[0]).To(Equal(uint64(488)))
		Expect(p.b.RxQueueCount(0)).To(Equal(512))
		conserved(p)
	})

	It("counts frames without an mbuf in rx_nombuf", func() {
		ao, bo := defaultOpts(), defaultOpts()
		bo.rxRing, bo.mbufs = 512, 100
		frame := udpFrame(64, 0)
		p := newPair(1, ao, bo, nic.LinkConfig{}, func(int) []byte { return frame }, 300, false)
		p.eng.Run()
		st := p.b.Stats()
		Expect(st.IPackets).To(Equal(uint64(100)))
		Expect(st.RxNoMbuf).To(Equal(uint64(200)))
		conserved(p)
	})

	It("makes TxBurst take fewer packets when the tx ring is full", func() {
		eng := sim.NewEngine(1)
		mem := newTestMem(1<<16, 1)
		o := defaultOpts()
		o.txRing = 128
		a, pool := newPort(eng, mem, 0, "a", o)
		b, _ := newPort(eng, mem, 1, "b", defaultOpts())
		_, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
		Expect(err).NotTo(HaveOccurred())
		burst := make([]*hw.Mbuf, 200)
		for i := range burst {
			burst[i] = mbufOf(pool, udpFrame(64, uint32(i)))
		}
		Expect(a.TxBurst(0, burst)).To(Equal(128))
		Expect(a.TxBurst(0, burst[128:])).To(Equal(0))
		Expect(a.Counters().TxRingFull).To(Equal(uint64(2)))
		// After the wire has carried them, the descriptors come back.
		eng.RunUntil(10 * time.Microsecond)
		Expect(a.TxBurst(0, burst[128:])).To(Equal(72))
		Expect(pool.Counters().InUse).To(Equal(72)) // the first 128 were freed on reclaim
		Expect(a.TxDoneCleanup(0)).To(Equal(0))
		eng.RunUntil(20 * time.Microsecond)
		Expect(a.TxDoneCleanup(0)).To(Equal(72))
		Expect(pool.Counters().InUse).To(Equal(0))
	})

	It("drops frames of a port with no link as oerrors", func() {
		eng := sim.NewEngine(1)
		mem := newTestMem(1<<16, 1)
		a, pool := newPort(eng, mem, 0, "a", defaultOpts())
		Expect(a.Link().Up).To(BeFalse())
		Expect(a.TxBurst(0, []*hw.Mbuf{mbufOf(pool, udpFrame(64, 0))})).To(Equal(1))
		Expect(a.Stats().OErrors).To(Equal(uint64(1)))
		Expect(a.Counters().TxLinkDown).To(Equal(uint64(1)))
		Expect(pool.Counters().InUse).To(BeZero())
	})

	impaired := nic.LinkConfig{
		Latency: 5 * time.Microsecond, Jitter: 2 * time.Microsecond,
		Loss: 0.05, Duplicate: 0.03, Reorder: 0.03, Corrupt: 0.02, CRCErrors: 0.01,
	}
	run := func(seed uint64, cfg nic.LinkConfig) *pair {
		p := newPair(seed, defaultOpts(), defaultOpts(), cfg, func(i int) []byte { return udpFrame(128, uint32(i)) }, 20_000, true)
		p.eng.Run()
		return p
	}

	It("reproduces the impairment pattern with the same seed, and not with another", func() {
		a1, a2, b := run(7, impaired), run(7, impaired), run(8, impaired)
		Expect(a1.dst.seqs).To(Equal(a2.dst.seqs))
		Expect(a1.link.Stats()).To(Equal(a2.link.Stats()))
		Expect(a1.dst.seqs).NotTo(Equal(b.dst.seqs))
		for _, p := range []*pair{a1, b} {
			ls := p.link.Stats().AToB
			GinkgoWriter.Printf("link stats: %+v\n", ls)
			Expect(ls.Lost).To(BeNumerically("~", 1000, 150))
			Expect(ls.Duplicated).To(BeNumerically("~", 600*0.95, 120))
			Expect(ls.Reordered).To(BeNumerically(">", 400))
			Expect(ls.Corrupted).To(BeNumerically(">", 250))
			Expect(ls.CRCErrors).To(BeNumerically(">", 100))
			// A duplicate of a bad frame is bad too.
			Expect(p.b.Counters().RxCRCErrors).To(BeNumerically(">=", ls.CRCErrors))
			conserved(p)
		}
	})

	It("never reorders frames through jitter alone", func() {
		p := run(3, nic.LinkConfig{Latency: time.Microsecond, Jitter: 5 * time.Microsecond})
		Expect(p.dst.got).To(Equal(20_000))
		for i, s := range p.dst.seqs {
			Expect(s).To(Equal(uint32(i)))
		}
	})

	It("reorders frames when reorder is set", func() {
		p := run(3, nic.LinkConfig{Latency: time.Microsecond, Reorder: 0.01})
		Expect(p.dst.got).To(Equal(20_000))
		inversions := 0
		for i := 1; i < len(p.dst.seqs); i++ {
			if p.dst.seqs[i] < p.dst.seqs[i-1] {
				inversions++
			}
		}
		Expect(inversions).To(BeNumerically(">", 100))
		Expect(uint64(inversions)).To(BeNumerically("<=", p.link.Stats().Reordered))
	})

	It("lets the receiver's checksums catch corrupted frames", func() {
		bo := defaultOpts()
		bo.rxOffloads = hw.RxOffloadIPv4Checksum | hw.RxOffloadUDPChecksum
		p := newPair(5, defaultOpts(), bo, nic.LinkConfig{Corrupt: 1}, func(i int) []byte { return udpFrame(128, uint32(i)) }, 5000, true)
		p.eng.Run()
		caught := 0
		for _, f := range p.dst.flags {
			if f&(hw.RxIPChecksumBad|hw.RxL4ChecksumBad) != 0 || f&hw.RxIPChecksumGood == 0 || f&hw.RxL4ChecksumGood == 0 {
				caught++
			}
		}
		GinkgoWriter.Printf("corrupted frames caught by checksums: %d of %d\n", caught, len(p.dst.flags))
		// corrupt flips one bit, and the Internet checksum catches
		// every single-bit error (RFC 1071).
		Expect(caught).To(Equal(len(p.dst.flags)))
		cs := p.b.Counters()
		Expect(cs.RxIPChecksumBad + cs.RxL4ChecksumBad).To(BeNumerically(">", 0))
	})

	It("loses frames while flapping and counts the flaps", func() {
		cfg := nic.LinkConfig{Latency: time.Microsecond, Flaps: []nic.FlapConfig{
			{At: 100 * time.Microsecond, DownFor: 50 * time.Microsecond, Every: 200 * time.Microsecond, Count: 3},
		}}
		p := newPair(1, defaultOpts(), defaultOpts(), cfg, func(i int) []byte { return udpFrame(1518, uint32(i)) }, 2000, true)
		p.eng.Run()
		ls := p.link.Stats()
		Expect(ls.Flaps).To(Equal(uint64(3)))
		Expect(ls.DownTime).To(Equal(150 * time.Microsecond))
		Expect(ls.Up).To(BeTrue())
		as := p.a.Counters()
		Expect(as.TxLinkDown).To(BeNumerically(">", 0))
		Expect(ls.AToB.DroppedLinkDown).To(BeNumerically(">", 0))
		conserved(p)
	})

	It("goes down and up on demand", func() {
		p := newPair(1, defaultOpts(), defaultOpts(), nic.LinkConfig{}, func(i int) []byte { return udpFrame(64, uint32(i)) }, 10, true)
		p.link.SetUp(false)
		Expect(p.a.Link().Up).To(BeFalse())
		p.eng.Run()
		Expect(p.a.Counters().TxLinkDown).To(Equal(uint64(10)))
		p.link.SetUp(true)
		Expect(p.a.Link()).To(Equal(hw.LinkStatus{Up: true, SpeedMbps: 25000, FullDuplex: true}))
	})

	It("loses carrier when the far port stops", func() {
		p := newPair(1, defaultOpts(), defaultOpts(), nic.LinkConfig{}, func(i int) []byte { return udpFrame(64, uint32(i)) }, 10, true)
		Expect(p.a.Link().Up).To(BeTrue())
		Expect(p.b.Stop()).To(Succeed())
		Expect(p.a.Link().Up).To(BeFalse())
		p.eng.Run()
		Expect(p.a.Counters().TxLinkDown).To(Equal(uint64(10)))
		Expect(p.b.Start()).To(Succeed())
		Expect(p.a.Link().Up).To(BeTrue())
	})

	It("takes its rate from bandwidth, else the slower port", func() {
		eng := sim.NewEngine(1)
		mem := newTestMem(1<<16, 1)
		o10 := defaultOpts()
		o10.model = "x710-10g"
		a, _ := newPort(eng, mem, 0, "a", defaultOpts())
		b, _ := newPort(eng, mem, 1, "b", o10)
		l, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
		Expect(err).NotTo(HaveOccurred())
		Expect(l.BitsPerSecond()).To(Equal(int64(10e9)))
		c, _ := newPort(eng, mem, 2, "c", defaultOpts())
		d, _ := newPort(eng, mem, 3, "d", defaultOpts())
		l2, err := nic.NewLink(eng, "cd", c, d, nic.LinkConfig{Bandwidth: "1Gbps"})
		Expect(err).NotTo(HaveOccurred())
		Expect(l2.BitsPerSecond()).To(Equal(int64(1e9)))
		_, err = nic.NewLink(eng, "again", a, c, nic.LinkConfig{})
		Expect(err).To(MatchError(ContainSubstring(`already connected to link "ab"`)))
	})
})
