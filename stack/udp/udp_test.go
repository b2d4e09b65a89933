package udp_test

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/udp"
)

var (
	src = [4]byte{10, 0, 0, 2}
	dst = [4]byte{10, 0, 0, 1}
)

func datagram(sport, dport uint16, payload []byte) udp.Packet {
	b := make([]byte, udp.HeaderLen+len(payload))
	copy(b[udp.HeaderLen:], payload)
	udp.Repr{SrcPort: sport, DstPort: dport, PayloadLen: len(payload)}.Emit(udp.Packet(b), src, dst, true)
	return udp.Packet(b)
}

var _ = Describe("Packet", func() {
	It("round-trips with a checksum", func() {
		p := datagram(5000, 53, []byte("query"))
		r, err := udp.Parse(p, src, dst, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(r).To(Equal(udp.Repr{SrcPort: 5000, DstPort: 53, PayloadLen: 5, Checksummed: true}))
		Expect(p.Payload()).To(Equal([]byte("query")))
		Expect(p.VerifyChecksum(src, dst)).To(BeTrue())
		Expect(p.VerifyChecksum(src, [4]byte{10, 0, 0, 9})).To(BeFalse(), "the pseudo-header counts")
	})
	It("accepts a zero checksum as none (RFC 768)", func() {
		p := datagram(1, 2, []byte("x"))
		p.SetChecksum(0)
		r, err := udp.Parse(p, src, dst, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Checksummed).To(BeFalse())
	})
	It("sends a computed zero as 0xffff", func() {
		// Find a payload whose checksum computes to zero.
		for v := range 1 << 16 {
			p := datagram(1, 2, []byte{byte(v >> 8), byte(v)})
			if p.Checksum() == 0xffff {
				Expect(p.VerifyChecksum(src, dst)).To(BeTrue())
				return
			}
			Expect(p.Checksum()).NotTo(BeZero())
		}
		Fail("no payload summed to zero")
	})
	It("leaves the pseudo-header sum for offload", func() {
		b := make([]byte, 12)
		udp.Repr{SrcPort: 1, DstPort: 2, PayloadLen: 4}.Emit(udp.Packet(b), src, dst, false)
		Expect(udp.Packet(b).Checksum()).To(Equal(checksum.Fold(checksum.PseudoHeaderV4(src, dst, 17, 12))))
	})
	It("checksums under a pseudo-header sum the network layer supplies, as FillChecksum does over IPv4's", func() {
		p := datagram(7, 9, []byte("any network"))
		want := p.Checksum()
		pseudo := checksum.PseudoHeaderV4(src, dst, 17, len(p))
		p.FillChecksumPseudo(pseudo)
		Expect(p.Checksum()).To(Equal(want))
		p.SetPseudoChecksum(pseudo)
		Expect(p.Checksum()).To(Equal(checksum.Fold(pseudo)))
		// Finishing the offloaded sum over the datagram, as a NIC does,
		// gives the checksum.
		Expect(checksum.Checksum(p)).To(Equal(want))
		// A sum that completes to zero goes out as 0xffff (RFC 768).
		p.SetChecksum(0)
		p.FillChecksumPseudo(uint64(checksum.Fold(checksum.Add(0, p))) ^ 0xffff)
		Expect(p.Checksum()).To(Equal(uint16(0xffff)))
	})
	It("ignores bytes past the length field", func() {
		p := append(datagram(1, 2, []byte("ab")), 0xee, 0xee)
		r, err := udp.Parse(p, src, dst, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.PayloadLen).To(Equal(2))
	})
	It("agrees with gopacket both ways", func() {
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src[:], DstIP: dst[:]}
		u := &layers.UDP{SrcPort: 4000, DstPort: 4001}
		Expect(u.SetNetworkLayerForChecksum(ip)).To(Succeed())
		buf := gopacket.NewSerializeBuffer()
		Expect(gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, u, gopacket.Payload([]byte("hello")))).To(Succeed())
		r, err := udp.Parse(udp.Packet(buf.Bytes()), src, dst, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.SrcPort).To(Equal(uint16(4000)))
		Expect(r.PayloadLen).To(Equal(5))
		Expect(udp.Packet(buf.Bytes()).Checksum()).To(Equal(datagram(4000, 4001, []byte("hello")).Checksum()))

		pkt := gopacket.NewPacket(datagram(7, 9, []byte("abc")), layers.LayerTypeUDP, gopacket.Default)
		l := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		Expect(l.SrcPort).To(Equal(layers.UDPPort(7)))
		Expect(l.Length).To(Equal(uint16(11)))
	})
	DescribeTable("rejects malformed datagrams", func(mutate func(p udp.Packet) udp.Packet, want udp.Error) {
		_, err := udp.Parse(mutate(datagram(1, 2, []byte("abcdef"))), src, dst, true)
		Expect(err).To(Equal(want))
		Expect(want.Name()).NotTo(Equal("unknown"))
		Expect(want.Error()).To(HavePrefix("udp: "))
	},
		Entry("short", func(p udp.Packet) udp.Packet { return p[:7] }, udp.ErrTruncated),
		Entry("length below 8", func(p udp.Packet) udp.Packet { p.SetLength(7); return p }, udp.ErrLength),
		Entry("length past the end", func(p udp.Packet) udp.Packet { p.SetLength(15); return p }, udp.ErrTruncated),
		Entry("checksum", func(p udp.Packet) udp.Packet { p[9]++; return p }, udp.ErrChecksum),
	)
})
