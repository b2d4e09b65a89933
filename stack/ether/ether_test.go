package ether_test

import (
	"net"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ether"
)

var (
	macA = ether.Addr{0x02, 0, 0, 0, 0, 0x0a}
	macB = ether.Addr{0x02, 0, 0, 0, 0, 0x0b}
)

var _ = Describe("Addr", func() {
	It("classifies addresses", func() {
		Expect(ether.BroadcastAddr().IsBroadcast()).To(BeTrue())
		Expect(ether.BroadcastAddr().IsMulticast()).To(BeTrue())
		Expect(macA.IsUnicast()).To(BeTrue())
		Expect(macA.IsLocal()).To(BeTrue())
		Expect(ether.Addr{}.IsZero()).To(BeTrue())
		Expect(ether.Addr{}.IsUnicast()).To(BeFalse())
		Expect(ether.Addr{0x01, 0, 0x5e, 0, 0, 1}.IsMulticast()).To(BeTrue())
	})
	It("parses and formats", func() {
		a, err := ether.ParseAddr("02:00:00:00:00:0A")
		Expect(err).NotTo(HaveOccurred())
		Expect(a).To(Equal(macA))
		Expect(a.String()).To(Equal("02:00:00:00:00:0a"))
		Expect(a.HardwareAddr()).To(Equal(net.HardwareAddr(macA[:])))
		Expect(ether.AddrFrom([]byte{1, 2})).To(Equal(ether.Addr{}))
	})
	DescribeTable("rejects bad MAC strings", func(s string) {
		_, err := ether.ParseAddr(s)
		Expect(err).To(MatchError(ContainSubstring(s)))
	},
		Entry("garbage", "zz"),
		Entry("EUI-64", "02:00:00:00:00:00:00:01"),
	)
})

var _ = Describe("Frame", func() {
	It("round-trips an untagged header", func() {
		b := make([]byte, 64)
		r := ether.Repr{Dst: macB, Src: macA, EtherType: ether.TypeIPv4}
		r.Emit(ether.Frame(b))
		got, err := ether.Parse(ether.Frame(b))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(r))
		Expect(ether.Frame(b).HeaderLen()).To(Equal(14))
		Expect(ether.Frame(b).Payload()).To(HaveLen(50))
	})
	It("round-trips a tagged header", func() {
		b := make([]byte, 64)
		r := ether.Repr{Dst: macB, Src: macA, EtherType: ether.TypeARP, Tagged: true, VLANTCI: 0x2064}
		r.Emit(ether.Frame(b))
		Expect(r.HeaderLen()).To(Equal(18))
		got, err := ether.Parse(ether.Frame(b))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(r))
		Expect(ether.Frame(b).Payload()).To(HaveLen(46))
	})
	It("swaps its addresses in place and touches nothing else", func() {
		f := make(ether.Frame, ether.MinFrameLen)
		ether.Repr{Dst: macA, Src: macB, EtherType: ether.TypeIPv4}.Emit(f)
		f[ether.HeaderLen] = 0x45
		want := append(ether.Frame(nil), f...)
		f.SwapAddrs()
		Expect(f.Dst()).To(Equal(macB))
		Expect(f.Src()).To(Equal(macA))
		Expect(f[12:]).To(Equal(want[12:]))
		f.SwapAddrs()
		Expect(f).To(Equal(want))
	})
	It("agrees with gopacket", func() {
		buf := gopacket.NewSerializeBuffer()
		Expect(gopacket.SerializeLayers(buf, gopacket.SerializeOptions{},
			&layers.Ethernet{SrcMAC: macA[:], DstMAC: macB[:], EthernetType: layers.EthernetTypeDot1Q},
			&layers.Dot1Q{Priority: 3, VLANIdentifier: 100, Type: layers.EthernetTypeIPv4},
			gopacket.Payload(make([]byte, 46)),
		)).To(Succeed())
		r, err := ether.Parse(ether.Frame(buf.Bytes()))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Src).To(Equal(macA))
		Expect(r.Dst).To(Equal(macB))
		Expect(r.Tagged).To(BeTrue())
		Expect(r.VLANTCI & 0x0fff).To(Equal(uint16(100)))
		Expect(r.VLANTCI >> 13).To(Equal(uint16(3)))
		Expect(r.EtherType).To(Equal(ether.TypeIPv4))

		// And the other way: what we emit, gopacket decodes.
		b := make([]byte, 60)
		ether.Repr{Dst: ether.BroadcastAddr(), Src: macA, EtherType: ether.TypeARP}.Emit(ether.Frame(b))
		pkt := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
		eth := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
		Expect(eth.EthernetType).To(Equal(layers.EthernetTypeARP))
		Expect([]byte(eth.SrcMAC)).To(Equal(macA[:]))
	})
	DescribeTable("rejects malformed frames", func(b []byte, want ether.Error) {
		_, err := ether.Parse(ether.Frame(b))
		Expect(err).To(Equal(want))
		Expect(want.Name()).NotTo(Equal("unknown"))
		Expect(want.Error()).To(HavePrefix("ethernet: "))
	},
		Entry("empty", []byte{}, ether.ErrTruncated),
		Entry("13 bytes", make([]byte, 13), ether.ErrTruncated),
		Entry("tag cut short", append(make([]byte, 12), 0x81, 0x00, 0, 1), ether.ErrTruncated),
		Entry("802.3 length", append(make([]byte, 12), 0x00, 0x40, 0, 0), ether.ErrLengthField),
		Entry("QinQ outer", append(make([]byte, 12), 0x88, 0xa8, 0, 1, 0x81, 0, 0, 0), ether.ErrStackedVLAN),
		Entry("two 802.1Q tags", append(make([]byte, 12), 0x81, 0x00, 0, 1, 0x81, 0, 0, 0), ether.ErrStackedVLAN),
	)
})
