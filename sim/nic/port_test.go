package nic_test

import (
	"encoding/binary"
	"net"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/checksum"
)

var _ = Describe("Port", func() {
	var (
		eng *sim.Engine
		mem *testMem
	)
	BeforeEach(func() {
		eng = sim.NewEngine(1)
		mem = newTestMem(1<<16, 2)
	})

	It("reports its preset in Info and validates Configure against it", func() {
		p, err := nic.NewPort(eng, 3, nic.PortConfig{Name: "eth0", Model: "x710-10g", NUMANode: 1, MAC: "02:00:00:00:00:07"})
		Expect(err).NotTo(HaveOccurred())
		info := p.Info()
		Expect(info.DriverName).To(Equal("net_i40e"))
		Expect(info.NUMANode).To(Equal(1))
		Expect(info.SpeedMbps).To(Equal(10000))
		Expect(info.RETASize).To(Equal(512))
		Expect(p.MACAddr().String()).To(Equal("02:00:00:00:00:07"))
		Expect(p.RSSKey()).To(Equal(nic.MicrosoftRSSKey()))

		Expect(p.Configure(hw.PortConf{RxQueues: 65, TxQueues: 1})).To(MatchError(ContainSubstring("rx queues 65 outside 1..64")))
		Expect(p.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, RSSKey: make([]byte, 7)})).To(MatchError(ContainSubstring("RSS key of 7 bytes")))
		Expect(p.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, MTU: 9800})).To(MatchError(ContainSubstring("MTU 9800")))
		Expect(p.Start()).To(MatchError(ContainSubstring("not configured")))
		Expect(p.Configure(hw.PortConf{RxQueues: 2, TxQueues: 2})).To(Succeed())
		pool, err := nic.NewMempool("p", 64, nic.DefaultMbufSize, 1, mem)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.SetupRxQueue(0, 3000, pool)).To(MatchError(ContainSubstring("3000 is not a power of two")))
		Expect(p.SetupRxQueue(0, 8192, pool)).To(MatchError(ContainSubstring("outside x710-10g's range 64..4096")))
		Expect(p.SetupRxQueue(2, 512, pool)).To(MatchError(ContainSubstring("port has 2 rx queues")))
		Expect(p.SetupRxQueue(0, 0, pool)).To(Succeed()) // default ring
		Expect(p.Start()).To(MatchError(ContainSubstring("rx queue 1 not set up")))
		Expect(p.SetupRxQueue(1, 512, pool)).To(Succeed())
		Expect(p.SetupTxQueue(0, 0)).To(Succeed())
		Expect(p.SetupTxQueue(1, 256)).To(Succeed())
		Expect(p.Start()).To(Succeed())
		Expect(p.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1})).To(MatchError(nic.ErrStarted))
		Expect(p.RETA()[:4]).To(Equal([]uint16{0, 1, 0, 1}))
	})

	It("derives a stable locally administered MAC", func() {
		p1, _ := nic.NewPort(eng, 0, nic.PortConfig{Name: "eth0", Model: "e810-100g"})
		p2, _ := nic.NewPort(eng, 0, nic.PortConfig{Name: "eth0", Model: "e810-100g"})
		Expect(p1.MACAddr()).To(Equal(p2.MACAddr()))
		Expect(p1.MACAddr()[0] & 0x03).To(Equal(byte(0x02)))
	})

	DescribeTable("sets rx checksum flags",
		func(f flow, want hw.OffloadFlags) {
			o := defaultOpts()
			o.rxOffloads = hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum | hw.RxOffloadUDPChecksum
			a, pool := newPort(eng, mem, 0, "a", defaultOpts())
			b, _ := newPort(eng, mem, 1, "b", o)
			_, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
			Expect(err).NotTo(HaveOccurred())
			f.src, f.dst, f.sport, f.dport, f.payload = net.IPv4(10, 1, 1, 1), net.IPv4(10, 1, 1, 2), 5, 6, 33
			if f.ipv6 {
				f.src, f.dst = net.ParseIP("fe80::1"), net.ParseIP("fe80::2")
			}
			Expect(a.TxBurst(0, []*hw.Mbuf{mbufOf(pool, buildFrame(f))})).To(Equal(1))
			eng.Run()
			var got [1]*hw.Mbuf
			Expect(b.RxBurst(0, got[:])).To(Equal(1))
			Expect(got[0].Flags).To(Equal(want))
			got[0].Free()
		},
		Entry("good UDP", flow{}, hw.RxIPChecksumGood|hw.RxL4ChecksumGood),
		Entry("good TCP", flow{tcp: true}, hw.RxIPChecksumGood|hw.RxL4ChecksumGood),
		Entry("bad IP header", flow{badIP: true}, hw.RxIPChecksumBad|hw.RxL4ChecksumGood),
		Entry("bad UDP", flow{badL4: true}, hw.RxIPChecksumGood|hw.RxL4ChecksumBad),
		Entry("bad TCP", flow{tcp: true, badL4: true}, hw.RxIPChecksumGood|hw.RxL4ChecksumBad),
		Entry("UDP without checksum over IPv4", flow{zeroL4: true}, hw.RxIPChecksumGood|hw.RxL4ChecksumGood),
		Entry("good TCP over IPv6", flow{tcp: true, ipv6: true}, hw.RxL4ChecksumGood),
		Entry("bad UDP over IPv6", flow{ipv6: true, badL4: true}, hw.RxL4ChecksumBad),
	)

	DescribeTable("fills tx checksums the mbuf asks for",
		func(tcp bool, seedPhdr bool, wantMissing uint64) {
			o := defaultOpts()
			o.txOffloads = hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum | hw.TxOffloadUDPChecksum
			a, pool := newPort(eng, mem, 0, "a", o)
			b, _ := newPort(eng, mem, 1, "b", defaultOpts())
			_, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
			Expect(err).NotTo(HaveOccurred())
			good := buildFrame(flow{src: net.IPv4(10, 1, 1, 1), dst: net.IPv4(10, 1, 1, 2), sport: 5, dport: 6, payload: 41, tcp: tcp})
			frame := append([]byte(nil), good...)
			field := 14 + 20 + 6
			if tcp {
				field = 14 + 20 + 16
			}
			binary.BigEndian.PutUint16(frame[24:], 0)
			binary.BigEndian.PutUint16(frame[field:], 0)
			if seedPhdr {
				// rte_ipv4_phdr_cksum: the folded pseudo-header sum.
				proto := uint8(17)
				if tcp {
					proto = 6
				}
				phdr := checksum.PseudoHeaderV4([4]byte{10, 1, 1, 1}, [4]byte{10, 1, 1, 2}, proto, len(frame)-34)
				binary.BigEndian.PutUint16(frame[field:], checksum.Fold(phdr))
			}
			m := mbufOf(pool, frame)
			m.Flags = hw.TxIPChecksum | hw.TxIPv4 | hw.TxUDPChecksum
			if tcp {
				m.Flags = hw.TxIPChecksum | hw.TxIPv4 | hw.TxTCPChecksum
			}
			m.L2Len, m.L3Len = 14, 20
			Expect(a.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1))
			eng.Run()
			var got [1]*hw.Mbuf
			Expect(b.RxBurst(0, got[:])).To(Equal(1))
			Expect(got[0].Data()).To(Equal(good))
			got[0].Free()
			Expect(a.Counters().TxL4PseudoHeaderMissing).To(Equal(wantMissing))
		},
		Entry("UDP seeded with the pseudo-header sum", false, true, uint64(0)),
		Entry("TCP seeded with the pseudo-header sum", true, true, uint64(0)),
		Entry("TCP with a zero field (works here, not on Intel hardware)", true, false, uint64(1)),
	)

	It("does not fill checksums for offloads the port was not configured with", func() {
		a, pool := newPort(eng, mem, 0, "a", defaultOpts())
		b, _ := newPort(eng, mem, 1, "b", defaultOpts())
		_, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
		Expect(err).NotTo(HaveOccurred())
		frame := udpFrame(100, 1)
		frame[24], frame[25] = 0, 0
		m := mbufOf(pool, frame)
		m.Flags = hw.TxIPChecksum
		Expect(a.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1))
		eng.Run()
		Expect(a.Counters().TxOffloadNotEnabled).To(Equal(uint64(1)))
	})

	It("charges burst costs to the bound core and rings its doorbell", func() {
		var prices sim.Prices
		prices[hw.CostNICRxBurst] = 50_000  // 50 ns
		prices[hw.CostNICRxPacket] = 10_000 // 10 ns
		prices[hw.CostNICTxBurst] = 40_000
		prices[hw.CostNICTxPacket] = 5_000
		a, pool := newPort(eng, mem, 0, "a", defaultOpts())
		b, _ := newPort(eng, mem, 1, "b", defaultOpts())
		_, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{Latency: 10 * time.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		ca := sim.NewCore(eng, 0, 0, &prices, false)
		cb := sim.NewCore(eng, 1, 0, &prices, false)
		Expect(a.BindQueue(0, ca)).To(Succeed())
		Expect(b.BindQueue(0, cb)).To(Succeed())
		src := &source{port: a, pool: pool, frames: func(i int) []byte { return udpFrame(64, uint32(i)) }, total: 10, retry: time.Microsecond}
		dst := &sink{port: b}
		ca.Attach(src)
		cb.Attach(dst)
		eng.Run()
		Expect(dst.got).To(Equal(10))
		sa, sb := ca.Stats(), cb.Stats()
		Expect(sa.Ops[hw.CostNICTxBurst]).To(Equal(int64(1)))
		Expect(sa.Ops[hw.CostNICTxPacket]).To(Equal(int64(10)))
		Expect(sb.Ops[hw.CostNICRxPacket]).To(Equal(int64(10)))
		Expect(sb.Ops[hw.CostNICRxBurst]).To(BeNumerically(">=", 2))
		// The frames arrive after the link latency: the receiver's first
		// wake is a doorbell, not a timer.
		Expect(dst.first).To(BeNumerically(">=", int64(10*time.Microsecond)))
		Expect(b.Stats().QIPackets).To(Equal([]uint64{10}))
	})

	It("names its statistics as DPDK does and resets them", func() {
		a, pool := newPort(eng, mem, 0, "a", defaultOpts())
		a.TxBurst(0, []*hw.Mbuf{mbufOf(pool, udpFrame(64, 0))})
		x := a.XStats()
		names := []string{}
		for _, s := range x {
			names = append(names, s.Name)
		}
		Expect(names[:8]).To(Equal([]string{"rx_good_packets", "tx_good_packets", "rx_good_bytes", "tx_good_bytes",
			"rx_missed_errors", "rx_errors", "tx_errors", "rx_mbuf_allocation_errors"}))
		Expect(names).To(ContainElements("rx_q0_packets", "tx_q0_bytes", "rx_crc_errors", "tx_link_down_drops"))
		Expect(x[6].Value).To(Equal(uint64(1)))
		a.ResetStats()
		Expect(a.Stats().OErrors).To(BeZero())
	})

	It("flushes unread packets at Stop, counted", func() {
		a, pool := newPort(eng, mem, 0, "a", defaultOpts())
		b, _ := newPort(eng, mem, 1, "b", defaultOpts())
		_, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
		Expect(err).NotTo(HaveOccurred())
		for i := 0; i < 5; i++ {
			a.TxBurst(0, []*hw.Mbuf{mbufOf(pool, udpFrame(64, 0))})
		}
		eng.Run()
		Expect(b.Stop()).To(Succeed())
		Expect(b.Counters().RxFlushed).To(Equal(uint64(5)))
		Expect(a.Stop()).To(Succeed())
		Expect(pool.Counters().InUse).To(BeZero())
		Expect(a.Link().Up).To(BeFalse())
	})

	It("counts oversized frames as ierrors", func() {
		a, pool := newPort(eng, mem, 0, "a", defaultOpts())
		b, err := nic.NewPort(eng, 1, nic.PortConfig{Name: "b", Model: "hi1822-25g"})
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, MTU: 1500})).To(Succeed())
		bp, _ := nic.NewMempool("b", 64, nic.DefaultMbufSize, 0, mem)
		Expect(b.SetupRxQueue(0, 512, bp)).To(Succeed())
		Expect(b.SetupTxQueue(0, 512)).To(Succeed())
		Expect(b.Start()).To(Succeed())
		_, err = nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
		Expect(err).NotTo(HaveOccurred())
		Expect(a.TxBurst(0, []*hw.Mbuf{mbufOf(pool, udpFrame(1600, 0))})).To(Equal(1))
		eng.Run()
		Expect(b.Stats().IErrors).To(Equal(uint64(1)))
		Expect(b.Counters().RxOversize).To(Equal(uint64(1)))
	})
})
