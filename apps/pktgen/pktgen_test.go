package pktgen_test

import (
	"encoding/binary"
	"net"
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/pktgen"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/rss"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim/nic"
)

// Offsets in pktgen's frames: Ethernet, IPv4 without options, UDP, then
// magic, sequence number and send time.
const (
	ipLenOff   = 14 + 2
	udpSrcOff  = 14 + 20
	udpLenOff  = 14 + 20 + 4
	payloadOff = 14 + 20 + 8
)

var wire = nic.LinkConfig{Latency: 10 * time.Microsecond}

var _ = Describe("Generator", func() {
	DescribeTable("sends rate_pps frames per second, each window's worth exactly",
		func(rate float64, window time.Duration) {
			b := newBench(pktgen.Config{RatePPS: rate}, simhost.NICConfig{}, simhost.NICConfig{}, wire)
			b.drain()
			b.eng.RunUntil(window)
			s := b.g.Stats(b.eng.Now())
			// A frame is due at every multiple of the interval from the
			// first turn at 0, both ends of the window included.
			interval := time.Duration(float64(time.Second) / rate)
			want := uint64(window/interval) + 1
			Expect(s.TxPackets).To(Equal(want))
			Expect(s.TxBytes).To(Equal(want * 60))
			Expect(s.TxPPS).To(BeNumerically("~", float64(want)/window.Seconds(), 1e-6))
			Expect(b.link.Stats().AToB.Frames).To(Equal(want))
			Expect(s.TxRingFull + s.NoMbuf).To(BeZero())
		},
		Entry("1 Mpps over 10 ms", 1e6, 10*time.Millisecond),
		Entry("250 kpps over 4 ms", 2.5e5, 4*time.Millisecond),
	)

	// Poll's deadline is (sent+1)/rate from the start where due() makes
	// frame number sent due at sent/rate: the core sleeps one interval
	// too long and then sends two frames back to back, so at 1 Mpps the
	// frames leave in pairs every 2 us. The mean rate is right (the spec
	// above); the spacing is not. Unpend when pktgen.go is fixed.
	It("spaces frames one interval apart", func() {
		b := newBench(pktgen.Config{RatePPS: 1e6}, simhost.NICConfig{}, simhost.NICConfig{}, wire)
		s := b.drain()
		b.eng.RunUntil(200 * time.Microsecond)
		Expect(len(s.frames)).To(BeNumerically(">", 100))
		// Within a twentieth of the interval: a send happens after the
		// turn's receive burst, which costs a few nanoseconds.
		for i := 1; i < len(s.frames); i++ {
			Expect(s.frames[i].at-s.frames[i-1].at).To(BeNumerically("~", time.Microsecond, 50*time.Nanosecond), "frame %d", i)
		}
	})

	It("sends as fast as the link takes frames with rate_pps 0, counting each frame the full tx ring refused", func() {
		const ring = 128 // the Hi1822's smallest
		b := newBench(pktgen.Config{}, simhost.NICConfig{TxRing: ring}, simhost.NICConfig{}, wire)
		b.drain()
		const window = 100 * time.Microsecond
		b.eng.RunUntil(window)
		s := b.g.Stats(b.eng.Now())
		// The wire is never idle once the ring has frames: what it
		// finished, plus at most a ring's worth waiting.
		onWire := uint64(window / serialization(60, b.link.BitsPerSecond()))
		Expect(s.TxPackets).To(BeNumerically(">=", onWire))
		Expect(s.TxPackets).To(BeNumerically("<=", onWire+ring+1))
		Expect(s.TxRingFull).To(BeNumerically(">", 0))
		// Each refused frame was built in an mbuf and freed again.
		pool := b.gen.Pools[0].Stats()
		Expect(uint64(pool.Gets)).To(Equal(s.TxPackets + s.TxRingFull))
		Expect(uint64(pool.InUse)).To(BeNumerically("<=", ring))
		// The port counts bursts that hit the full ring, pktgen frames.
		Expect(b.gen.Port.Counters().TxRingFull).To(BeNumerically("<=", s.TxRingFull))
		Expect(b.gen.Port.Counters().OPackets).To(Equal(s.TxPackets))
	})

	DescribeTable("stops after count frames, at any rate",
		func(rate float64) {
			b := newBench(pktgen.Config{RatePPS: rate, Count: 100}, simhost.NICConfig{TxRing: 128}, simhost.NICConfig{}, wire)
			b.reflect()
			b.eng.RunUntil(time.Millisecond)
			s := b.g.Stats(b.eng.Now())
			Expect(s.TxPackets).To(BeEquivalentTo(100))
			Expect(s.RxPackets).To(BeEquivalentTo(100))
			Expect(s.Lost).To(BeZero())
			Expect(b.link.Stats().AToB.Frames).To(BeEquivalentTo(100))
			b.eng.RunUntil(2 * time.Millisecond)
			Expect(b.g.Stats(b.eng.Now()).TxPackets).To(BeEquivalentTo(100))
		},
		Entry("1 Mpps", 1e6),
		Entry("as fast as the port takes them", 0.0),
	)

	It("spreads flows over UDP source ports, each flow on the RSS queue of its 4-tuple", func() {
		const flows, count, queues = 8, 800, 4
		b := newBench(pktgen.Config{RatePPS: 1e6, Count: count, Flows: flows, SrcPort: 5000, DstPort: 7},
			simhost.NICConfig{}, simhost.NICConfig{Queues: queues}, wire)
		s := b.drain()
		b.eng.RunUntil(2 * time.Millisecond)
		Expect(s.frames).To(HaveLen(count))
		// The dut hashes UDP over IPv4 on its 4-tuple with the default
		// (Microsoft) key, through a RETA round-robin over its queues.
		reta := make([]uint16, b.dut.Port.Preset().RETASize)
		rss.DefaultRETA(reta, queues)
		perPort := map[uint16]int{}
		used := map[int]bool{}
		for i, f := range s.frames {
			src := binary.BigEndian.Uint16(f.data[udpSrcOff:])
			Expect(binary.BigEndian.Uint16(f.data[udpSrcOff+2:])).To(BeEquivalentTo(7))
			// Flows take turns: frame n is flow n mod flows.
			Expect(src).To(BeEquivalentTo(5000+i%flows), "frame %d", i)
			perPort[src]++
			hash := rss.HashIPv4(rss.MicrosoftKey(), [4]byte(f.data[26:30]), [4]byte(f.data[30:34]), src, 7)
			Expect(f.queue).To(BeEquivalentTo(rss.RETAQueue(reta, hash)), "frame %d", i)
			used[f.queue] = true
		}
		Expect(perPort).To(HaveLen(flows))
		for port, n := range perPort {
			Expect(n).To(Equal(count/flows), "port %d", port)
		}
		Expect(len(used)).To(BeNumerically(">", 1), "eight flows over four queues use more than one")
	})

	It("sends one flow by default, which RSS keeps on one queue", func() {
		b := newBench(pktgen.Config{RatePPS: 1e6, Count: 200}, simhost.NICConfig{}, simhost.NICConfig{Queues: 4}, wire)
		s := b.drain()
		b.eng.RunUntil(time.Millisecond)
		Expect(s.frames).To(HaveLen(200))
		for _, f := range s.frames {
			Expect(f.queue).To(Equal(s.frames[0].queue))
			Expect(binary.BigEndian.Uint16(f.data[udpSrcOff:])).To(BeEquivalentTo(1024))
		}
	})

	DescribeTable("sends frames of size bytes, lengths in their headers to match",
		func(size, want int, nicCfg simhost.NICConfig) {
			b := newBench(pktgen.Config{RatePPS: 1e5, Count: 50, Size: size}, nicCfg, nicCfg, wire)
			s := b.drain()
			b.eng.RunUntil(time.Millisecond)
			Expect(s.frames).To(HaveLen(50))
			for _, f := range s.frames {
				Expect(f.data).To(HaveLen(want))
				Expect(binary.BigEndian.Uint16(f.data[ipLenOff:])).To(BeEquivalentTo(want - 14))
				Expect(binary.BigEndian.Uint16(f.data[udpLenOff:])).To(BeEquivalentTo(want - 14 - 20))
			}
			st := b.g.Stats(b.eng.Now())
			Expect(st.TxBytes).To(BeEquivalentTo(50 * want))
			Expect(b.link.Stats().AToB.Bytes).To(BeEquivalentTo(50 * want))
		},
		Entry("60 by default (64 on the wire)", 0, 60, simhost.NICConfig{}),
		Entry("128", 128, 128, simhost.NICConfig{}),
		Entry("1514", 1514, 1514, simhost.NICConfig{}),
		Entry("9000, on jumbo ports", 9000, 9000, simhost.NICConfig{MTU: 9000, MbufSize: 10240}),
	)

	DescribeTable("refuses a configuration out of range, naming the key",
		func(cfg pktgen.Config, key string) {
			Expect(cfg.Validate()).To(MatchError(HavePrefix(key + ":")))
			_, err := pktgen.New(cfg, pktgen.Endpoints{SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr("10.0.0.2")}, nil, 0, nil)
			Expect(err).To(MatchError(HavePrefix(key + ":")))
		},
		Entry("a negative rate", pktgen.Config{RatePPS: -1}, "rate_pps"),
		Entry("a runt", pktgen.Config{Size: 59}, "size"),
		Entry("beyond jumbo", pktgen.Config{Size: 9001}, "size"),
		Entry("more flows than ports", pktgen.Config{Flows: 65536}, "flows"),
	)

	It("refuses IPv6 endpoints", func() {
		_, err := pktgen.New(pktgen.Config{}, pktgen.Endpoints{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
			SrcIP: netip.MustParseAddr("fe80::1"), DstIP: netip.MustParseAddr("fe80::2")}, nil, 0, nil)
		Expect(err).To(MatchError(ContainSubstring("IPv4")))
	})

	DescribeTable("measures each reflected frame's round trip: both ways of the link and little else",
		func(latency time.Duration) {
			b := newBench(pktgen.Config{RatePPS: 1e5, Count: 500}, simhost.NICConfig{}, simhost.NICConfig{}, nic.LinkConfig{Latency: latency})
			b.reflect()
			b.eng.RunUntil(10 * time.Millisecond)
			s := b.g.Stats(b.eng.Now())
			Expect(s.RxPackets).To(BeEquivalentTo(500))
			Expect(s.RTT.Count).To(BeEquivalentTo(500))
			// At least the propagation and serialization both ways; the
			// cores' turns at 100 kpps add well under a microsecond.
			least := 2 * (latency + serialization(60, b.link.BitsPerSecond()))
			us := func(d time.Duration) float64 { return float64(d) / 1e3 }
			Expect(s.RTT.P50US).To(BeNumerically(">=", us(least)))
			Expect(s.RTT.MeanUS).To(BeNumerically(">=", us(least)))
			Expect(s.RTT.MaxUS).To(BeNumerically("<", us(least+time.Microsecond)))
			Expect(b.g.RTT().Count()).To(BeEquivalentTo(500))
		},
		Entry("over 10 us", 10*time.Microsecond),
		Entry("over 50 us", 50*time.Microsecond),
	)

	It("counts every frame lost when nothing reflects them", func() {
		b := newBench(pktgen.Config{RatePPS: 1e6, Count: 300}, simhost.NICConfig{}, simhost.NICConfig{}, wire)
		b.drain()
		b.eng.RunUntil(time.Millisecond)
		s := b.g.Stats(b.eng.Now())
		Expect(s.Lost).To(BeEquivalentTo(300))
		Expect(s.RxPackets).To(BeZero())
		Expect(s.RTT.Count).To(BeZero())
	})

	It("counts as lost exactly the frames the link lost, either way", func() {
		b := newBench(pktgen.Config{RatePPS: 1e6, Count: 2000}, simhost.NICConfig{}, simhost.NICConfig{},
			nic.LinkConfig{Latency: 10 * time.Microsecond, Loss: 0.05})
		f := b.reflect()
		b.eng.RunUntil(5 * time.Millisecond)
		s := b.g.Stats(b.eng.Now())
		ls := b.link.Stats()
		Expect(ls.AToB.Lost).To(BeNumerically(">", 0))
		Expect(ls.BToA.Lost).To(BeNumerically(">", 0))
		Expect(s.Lost).To(BeEquivalentTo(ls.Lost))
		Expect(f.Stats(0).RxPackets).To(Equal(2000 - ls.AToB.Lost))
		Expect(s.RxPackets + ls.Lost).To(BeEquivalentTo(2000))
	})

	It("counts frames it did not send as foreign, outside the round trips", func() {
		b := newBench(pktgen.Config{RatePPS: 1e5, Count: 10}, simhost.NICConfig{}, simhost.NICConfig{}, wire)
		b.reflect()
		m := b.dut.Pools[0].Get()
		Expect(m).NotTo(BeNil())
		foreign := make([]byte, 60)
		copy(foreign, b.gen.Port.MACAddr())
		copy(foreign[6:], b.dut.Port.MACAddr())
		foreign[12], foreign[13] = 0x88, 0xb5 // local experimental EtherType
		Expect(m.SetData(foreign)).To(Succeed())
		Expect(b.dut.Port.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1))
		b.eng.RunUntil(time.Millisecond)
		s := b.g.Stats(b.eng.Now())
		Expect(s.RxForeign).To(BeEquivalentTo(1))
		Expect(s.RxPackets).To(BeEquivalentTo(10))
		Expect(s.RTT.Count).To(BeEquivalentTo(10))
	})

	It("counts no_mbuf for each burst the pool cannot fill, sends nothing meanwhile, and resumes when mbufs come back", func() {
		b := newBench(pktgen.Config{Count: 100}, simhost.NICConfig{}, simhost.NICConfig{}, wire)
		b.drain()
		// Another user of the pool holds all but 16 mbufs: less than
		// the burst of 32 that rate_pps 0 asks for.
		pool := b.gen.Pools[0]
		hold := make([]*hw.Mbuf, pool.Stats().Available-16)
		Expect(pool.GetBulk(hold)).To(BeTrue())
		b.eng.RunUntil(10 * time.Microsecond)
		s := b.g.Stats(b.eng.Now())
		Expect(s.TxPackets).To(BeZero())
		Expect(s.NoMbuf).To(BeNumerically(">", 0))
		// Every turn of the generator's core tried one burst, and failed.
		Expect(s.NoMbuf).To(Equal(b.core.Stats().Turns))
		Expect(s.NoMbuf).To(BeEquivalentTo(pool.Stats().FailedGets))
		failed := s.NoMbuf
		for _, m := range hold {
			m.Free()
		}
		b.eng.RunUntil(time.Millisecond)
		s = b.g.Stats(b.eng.Now())
		Expect(s.TxPackets).To(BeEquivalentTo(100))
		Expect(s.NoMbuf).To(Equal(failed))
	})

	It("ResetStats starts a window: frames sent before it count neither as sent nor as received", func() {
		// 100 frames 1 us apart, reset between frames 50 and 51 while
		// frames 31..50 are on their 20 us round trip.
		b := newBench(pktgen.Config{RatePPS: 1e6, Count: 100}, simhost.NICConfig{}, simhost.NICConfig{}, wire)
		b.reflect()
		b.eng.RunUntil(50*time.Microsecond + 500*time.Nanosecond)
		before := b.g.Stats(b.eng.Now())
		Expect(before.TxPackets).To(BeEquivalentTo(51))
		Expect(before.RxPackets).To(BeNumerically(">", 0))
		b.g.ResetStats(b.eng.Now())
		zero := b.g.Stats(b.eng.Now())
		Expect(zero.TxPackets + zero.TxBytes + zero.RxPackets + zero.RxForeign + zero.TxRingFull + zero.NoMbuf).To(BeZero())
		Expect(zero.Lost).To(BeZero())
		Expect(zero.RTT.Count).To(BeZero())
		Expect(zero.TxPPS).To(BeZero())

		b.eng.RunUntil(time.Millisecond)
		s := b.g.Stats(b.eng.Now())
		Expect(s.TxPackets).To(BeEquivalentTo(100 - 51))
		Expect(s.RxPackets).To(BeEquivalentTo(100 - 51))
		Expect(s.RTT.Count).To(BeEquivalentTo(100 - 51))
		Expect(s.Lost).To(BeZero())
		Expect(s.TxPPS).To(BeNumerically("~", float64(100-51)/(time.Millisecond-50500*time.Nanosecond).Seconds(), 1e-6))
	})

	// A frame sent in a turn at the reset's instant, before it, is not
	// counted as sent, but receive counts any frame stamped at or after
	// the window's start: Lost goes negative. The rig resets at the end
	// of the warm-up, a round number of microseconds, where a 1 Mpps
	// generator sends. Unpend when pktgen tells its windows apart by
	// sequence number (or another epoch mark) rather than by send time.
	It("counts a frame sent in the instant of a reset on neither side", func() {
		b := newBench(pktgen.Config{RatePPS: 1e6, Count: 100}, simhost.NICConfig{}, simhost.NICConfig{}, wire)
		b.reflect()
		b.eng.RunUntil(50 * time.Microsecond) // frame 50 left at 50 us
		b.g.ResetStats(b.eng.Now())
		b.eng.RunUntil(time.Millisecond)
		s := b.g.Stats(b.eng.Now())
		Expect(s.RxPackets).To(Equal(s.TxPackets))
		Expect(s.Lost).To(BeZero())
	})
})
