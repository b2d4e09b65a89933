package ipv4_test

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ipv4"
)

var _ = Describe("Packet", func() {
	r := ipv4.Repr{Src: src, Dst: dst, Protocol: ipv4.ProtoTCP, TTL: 63, TOS: 0x10, Ident: 0xbeef, DontFrag: true}

	It("round-trips and validates its checksum", func() {
		p := datagram(r, []byte("hello"))
		got, err := ipv4.Parse(p, true)
		Expect(err).NotTo(HaveOccurred())
		want := r
		want.PayloadLen, want.HeaderLen = 5, 20
		Expect(got).To(Equal(want))
		Expect(p.VerifyChecksum()).To(BeTrue())
		Expect(p.Payload()).To(Equal([]byte("hello")))
		Expect(p.IsFragment()).To(BeFalse())
	})
	It("trims Ethernet padding", func() {
		p := append(datagram(r, []byte("hi")), 0, 0, 0, 0)
		q, err := ipv4.Check(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(q).To(HaveLen(22))
		got, _ := ipv4.Parse(p, true)
		Expect(got.PayloadLen).To(Equal(2))
	})
	It("skips options", func() {
		b := make([]byte, 24+3)
		rr := r
		rr.PayloadLen = 3
		rr.Emit(ipv4.Packet(b), false)
		p := ipv4.Packet(b)
		p.SetVersionIHL(24)
		p.SetTotalLen(27)
		copy(b[20:24], []byte{0x94, 0x04, 0, 0}) // router alert
		copy(b[24:], "abc")
		p.FillChecksum()
		got, err := ipv4.Parse(p, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.HeaderLen).To(Equal(24))
		Expect(p.Options()).To(HaveLen(4))
		Expect(p.Payload()).To(Equal([]byte("abc")))
	})
	It("skips checksum verification when hardware did it", func() {
		p := datagram(r, nil)
		p.SetChecksum(0x1234)
		_, err := ipv4.Parse(p, false)
		Expect(err).NotTo(HaveOccurred())
		_, err = ipv4.Parse(p, true)
		Expect(err).To(Equal(ipv4.ErrChecksum))
	})
	It("agrees with gopacket both ways", func() {
		p := datagram(ipv4.Repr{Src: src, Dst: dst, Protocol: ipv4.ProtoUDP, TTL: 5, Ident: 7, MoreFrags: true, FragOffset: 1480}, make([]byte, 16))
		pkt := gopacket.NewPacket(p, layers.LayerTypeIPv4, gopacket.Default)
		ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		Expect([]byte(ip.SrcIP.To4())).To(Equal(src[:]))
		Expect([]byte(ip.DstIP.To4())).To(Equal(dst[:]))
		Expect(ip.TTL).To(Equal(uint8(5)))
		Expect(ip.Id).To(Equal(uint16(7)))
		Expect(ip.Flags).To(Equal(layers.IPv4MoreFragments))
		Expect(ip.FragOffset * 8).To(Equal(uint16(1480)))
		Expect(ip.Checksum).To(Equal(p.Checksum()))

		buf := gopacket.NewSerializeBuffer()
		Expect(gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			&layers.IPv4{Version: 4, IHL: 5, TTL: 9, Id: 99, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolICMPv4,
				SrcIP: src[:], DstIP: dst[:]},
			gopacket.Payload([]byte{1, 2, 3, 4}))).To(Succeed())
		got, err := ipv4.Parse(ipv4.Packet(buf.Bytes()), true)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(ipv4.Repr{Src: src, Dst: dst, Protocol: ipv4.ProtoICMP, PayloadLen: 4, TTL: 9, Ident: 99, DontFrag: true, HeaderLen: 20}))
	})
	DescribeTable("rejects malformed datagrams", func(mutate func(p ipv4.Packet) ipv4.Packet, want ipv4.Error) {
		p := datagram(r, make([]byte, 16))
		_, err := ipv4.Parse(mutate(p), true)
		Expect(err).To(Equal(want))
		var st ipv4.Stats
		st.CountError(err)
		Expect(st.InHdrErrors).To(Equal(uint64(1)))
		Expect(want.Name()).NotTo(Equal("unknown"))
	},
		Entry("short", func(p ipv4.Packet) ipv4.Packet { return p[:19] }, ipv4.ErrTruncated),
		Entry("version 6", func(p ipv4.Packet) ipv4.Packet { p[0] = 0x65; return p }, ipv4.ErrVersion),
		Entry("IHL 4", func(p ipv4.Packet) ipv4.Packet { p[0] = 0x44; return p }, ipv4.ErrHeaderLen),
		Entry("IHL past the end", func(p ipv4.Packet) ipv4.Packet { p[0] = 0x4f; return p[:24] }, ipv4.ErrTruncated),
		Entry("total below header", func(p ipv4.Packet) ipv4.Packet { p.SetTotalLen(19); return p }, ipv4.ErrTotalLen),
		Entry("total past the end", func(p ipv4.Packet) ipv4.Packet { p.SetTotalLen(100); return p }, ipv4.ErrTruncated),
		Entry("checksum", func(p ipv4.Packet) ipv4.Packet { p[8]++; return p }, ipv4.ErrChecksum),
		Entry("fragment not a multiple of 8", func(p ipv4.Packet) ipv4.Packet {
			p = p[:20+12]
			p.SetTotalLen(32)
			p.SetFrag(false, true, 0)
			p.FillChecksum()
			return p
		}, ipv4.ErrFragLength),
		Entry("empty fragment", func(p ipv4.Packet) ipv4.Packet {
			p = p[:20]
			p.SetTotalLen(20)
			p.SetFrag(false, false, 8)
			p.FillChecksum()
			return p
		}, ipv4.ErrFragLength),
		Entry("ping of death", func(p ipv4.Packet) ipv4.Packet {
			p.SetFrag(false, false, 65528)
			p.FillChecksum()
			return p
		}, ipv4.ErrFragTooLong),
	)
	It("has address helpers", func() {
		Expect(ipv4.Mask(24)).To(Equal([4]byte{255, 255, 255, 0}))
		Expect(ipv4.Mask(0)).To(Equal([4]byte{}))
		Expect(ipv4.SubnetBroadcast(dst, ipv4.Mask(24))).To(Equal([4]byte{10, 0, 0, 255}))
		Expect(ipv4.SameSubnet(src, dst, ipv4.Mask(30))).To(BeTrue())
		Expect(ipv4.SameSubnet(src, [4]byte{10, 0, 1, 1}, ipv4.Mask(24))).To(BeFalse())
		Expect(ipv4.IsMulticast([4]byte{224, 0, 0, 1})).To(BeTrue())
		Expect(ipv4.IsReserved([4]byte{240, 0, 0, 1})).To(BeTrue())
		Expect(ipv4.IsReserved(ipv4.Broadcast())).To(BeFalse())
		a, err := ipv4.ParseAddr("192.168.1.2")
		Expect(err).NotTo(HaveOccurred())
		Expect(ipv4.AddrString(a)).To(Equal("192.168.1.2"))
		_, err = ipv4.ParseAddr("::1")
		Expect(err).To(HaveOccurred())
		Expect(ipv4.MaxFragmentPayload(1500, 20)).To(Equal(1480))
		Expect(ipv4.MaxFragmentPayload(1006, 20)).To(Equal(984))
	})
})
