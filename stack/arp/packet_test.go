package arp_test

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/ether"
)

var _ = Describe("Packet", func() {
	req := arp.Repr{Op: arp.OpRequest, SenderHW: macPeer, SenderIP: ipPeer, TargetIP: ipUs}

	It("round-trips", func() {
		b := make([]byte, arp.PacketLen)
		req.Emit(arp.Packet(b))
		got, err := arp.Parse(arp.Packet(b))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(req))
		Expect(got.IsGratuitous()).To(BeFalse())
	})
	It("ignores trailing padding", func() {
		b := make([]byte, 46)
		req.Emit(arp.Packet(b))
		_, err := arp.Parse(arp.Packet(b))
		Expect(err).NotTo(HaveOccurred())
	})
	It("agrees with gopacket both ways", func() {
		b := make([]byte, ether.HeaderLen+arp.PacketLen)
		ether.Repr{Dst: ether.BroadcastAddr(), Src: macPeer, EtherType: ether.TypeARP}.Emit(ether.Frame(b))
		req.Emit(arp.Packet(b[ether.HeaderLen:]))
		pkt := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
		a := pkt.Layer(layers.LayerTypeARP).(*layers.ARP)
		Expect(a.Operation).To(Equal(uint16(layers.ARPRequest)))
		Expect(a.SourceHwAddress).To(Equal(macPeer[:]))
		Expect(a.SourceProtAddress).To(Equal(ipPeer[:]))
		Expect(a.DstProtAddress).To(Equal(ipUs[:]))

		buf := gopacket.NewSerializeBuffer()
		Expect(gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &layers.ARP{
			AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
			HwAddressSize: 6, ProtAddressSize: 4, Operation: layers.ARPReply,
			SourceHwAddress: macUs[:], SourceProtAddress: ipUs[:],
			DstHwAddress: macPeer[:], DstProtAddress: ipPeer[:],
		})).To(Succeed())
		got, err := arp.Parse(arp.Packet(buf.Bytes()))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(arp.Repr{Op: arp.OpReply, SenderHW: macUs, SenderIP: ipUs, TargetHW: macPeer, TargetIP: ipPeer}))
	})
	DescribeTable("rejects malformed packets", func(mutate func(b []byte) []byte, want arp.Error) {
		b := make([]byte, arp.PacketLen)
		req.Emit(arp.Packet(b))
		_, err := arp.Parse(arp.Packet(mutate(b)))
		Expect(err).To(Equal(want))
		Expect(want.Name()).NotTo(Equal("unknown"))
		var st arp.Stats
		st.CountError(err)
		Expect(st.RxTruncated + st.RxBadHardwareType + st.RxBadProtocolType + st.RxBadOperation + st.RxBadSenderAddr).To(Equal(uint64(1)))
	},
		Entry("truncated", func(b []byte) []byte { return b[:27] }, arp.ErrTruncated),
		Entry("hardware type", func(b []byte) []byte { b[1] = 6; return b }, arp.ErrHardwareType),
		Entry("hardware length", func(b []byte) []byte { b[4] = 8; return b }, arp.ErrHardwareType),
		Entry("protocol type", func(b []byte) []byte { b[2] = 0x86; return b }, arp.ErrProtocolType),
		Entry("protocol length", func(b []byte) []byte { b[5] = 16; return b }, arp.ErrProtocolType),
		Entry("operation", func(b []byte) []byte { b[7] = 3; return b }, arp.ErrOperation),
		Entry("multicast sender", func(b []byte) []byte { b[8] = 1; return b }, arp.ErrSenderAddr),
	)
})
