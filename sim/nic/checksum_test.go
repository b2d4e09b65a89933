package nic

import (
	"encoding/binary"
	"math/rand/v2"
	"net"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The model's checksum is an oracle for the stack's (checksum.go), so it
// is checked here against published vectors and against a third
// implementation (gopacket's), never against stack/checksum.
var _ = Describe("the NIC model's Internet checksum (RFC 1071)", func() {
	DescribeTable("matches known vectors",
		func(b []byte, want uint16) {
			Expect(inetChecksum(b)).To(Equal(want), "% x", b)
		},
		// RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to
		// 2ddf0, folded ddf2; the checksum is its complement.
		Entry("RFC 1071 section 3 example", []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}, uint16(0x220d)),
		// The IPv4 header of the usual worked example (RFC 791 fields,
		// 192.168.0.1 -> 192.168.0.199, UDP, checksum b861).
		Entry("IPv4 header, checksum field zero",
			[]byte{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7},
			uint16(0xb861)),
		Entry("IPv4 header with its checksum verifies to zero",
			[]byte{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7},
			uint16(0)),
		Entry("no bytes", []byte{}, uint16(0xffff)),
		// RFC 1071 section 4.1: an odd last byte is padded on the right.
		Entry("one byte", []byte{0x01}, uint16(0xfeff)),
		Entry("odd length", []byte{0x00, 0x01, 0xf2}, uint16(0x0dfe)),
		// End-around carry (RFC 1071 section 2 (B)): ffff + 0001 = 1.
		Entry("a carry out of bit 15 comes back in at bit 0", []byte{0xff, 0xff, 0x00, 0x01}, uint16(0xfffe)),
		Entry("all ones sum to negative zero", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint16(0x0000)),
	)

	It("folds carries accumulated over a long input", func() {
		b := make([]byte, 64<<10)
		for i := range b {
			b[i] = 0xff
		}
		Expect(inetChecksum(b)).To(BeZero())
		b[0] = 0xfe // one word is 0xfeff: the sum is 0xfeff + k*0xffff = 0xfeff folded
		Expect(inetChecksum(b)).To(Equal(uint16(0x0100)))
	})

	It("sums in pieces as in one piece when the first pieces have even length", func() {
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 200; i++ {
			b := make([]byte, r.IntN(300))
			for k := range b {
				b[k] = byte(r.Uint32())
			}
			cut := r.IntN(len(b)/2+1) * 2
			Expect(checksumFrom(sum16(0, b[:cut]), b[cut:])).To(Equal(inetChecksum(b)))
		}
	})

	DescribeTable("agrees with gopacket on the TCP and UDP checksums of random packets, pseudo-header included",
		func(v6, tcp bool) {
			r := rand.New(rand.NewPCG(3, 4))
			for i := 0; i < 100; i++ {
				addr := func() net.IP {
					n := 4
					if v6 {
						n = 16
					}
					ip := make(net.IP, n)
					for k := range ip {
						ip[k] = byte(r.Uint32())
					}
					return ip
				}
				src, dst := addr(), addr()
				payload := make([]byte, r.IntN(1400))
				for k := range payload {
					payload[k] = byte(r.Uint32())
				}
				proto := layers.IPProtocolUDP
				if tcp {
					proto = layers.IPProtocolTCP
				}
				var ipl interface {
					gopacket.NetworkLayer
					gopacket.SerializableLayer
				}
				if v6 {
					ipl = &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: proto, SrcIP: src, DstIP: dst}
				} else {
					ipl = &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: proto, SrcIP: src, DstIP: dst}
				}
				var l4 gopacket.SerializableLayer
				field := 6
				if tcp {
					t := &layers.TCP{SrcPort: layers.TCPPort(r.Uint32()), DstPort: layers.TCPPort(r.Uint32()),
						Seq: r.Uint32(), Ack: r.Uint32(), ACK: true, Window: uint16(r.Uint32())}
					Expect(t.SetNetworkLayerForChecksum(ipl)).To(Succeed())
					l4, field = t, 16
				} else {
					u := &layers.UDP{SrcPort: layers.UDPPort(r.Uint32()), DstPort: layers.UDPPort(r.Uint32())}
					Expect(u.SetNetworkLayerForChecksum(ipl)).To(Succeed())
					l4 = u
				}
				buf := gopacket.NewSerializeBuffer()
				Expect(gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
					ipl, l4, gopacket.Payload(payload))).To(Succeed())
				pkt := buf.Bytes()
				hl := 20
				if v6 {
					hl = 40
				}
				seg := append([]byte(nil), pkt[hl:]...)
				want := binary.BigEndian.Uint16(seg[field:])
				var phdr uint64
				if v6 {
					phdr = pseudoSumV6(src, dst, uint8(proto), len(seg))
				} else {
					phdr = pseudoSumV4([4]byte(src), [4]byte(dst), uint8(proto), len(seg))
					Expect(inetChecksum(pkt[:hl])).To(BeZero(), "IPv4 header checksum")
				}
				seg[field], seg[field+1] = 0, 0
				got := checksumFrom(phdr, seg)
				if !tcp && got == 0 {
					got = 0xffff // RFC 768: a computed zero is sent as all ones
				}
				Expect(got).To(Equal(want), "packet % x", pkt)
			}
		},
		Entry("TCP over IPv4", false, true),
		Entry("UDP over IPv4", false, false),
		Entry("TCP over IPv6", true, true),
		Entry("UDP over IPv6", true, false),
	)
})
