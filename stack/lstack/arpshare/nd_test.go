package arpshare

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// ndFrame is an Ethernet frame with an IPv6 header (next header nh) and
// an ICMPv6 message of type typ behind it.
func ndFrame(nh, typ byte) []byte {
	f := []byte{0x33, 0x33, 0xff, 0, 0, 1, 2, 0, 0, 0, 0, 9, 0x86, 0xdd}
	ip := make([]byte, 40+24)
	ip[0], ip[6], ip[7] = 0x60, nh, 255
	ip[40] = typ
	return append(f, ip...)
}

var _ = Describe("Which frames are shared (RFC 826; RFC 4861 section 7)", func() {
	It("shares Neighbor Solicitations and Advertisements as ARP, nothing else of IPv6", func() {
		Expect(isShared(ndFrame(58, 135))).To(BeTrue(), "NS")
		Expect(isShared(ndFrame(58, 136))).To(BeTrue(), "NA")
		Expect(isShared(ndFrame(58, 128))).To(BeFalse(), "echo request")
		Expect(isShared(ndFrame(58, 134))).To(BeFalse(), "router advertisement: every instance hears it on its own")
		Expect(isShared(ndFrame(0, 135))).To(BeFalse(), "behind a hop-by-hop header: not recognised")
		Expect(isShared(ndFrame(6, 135))).To(BeFalse(), "TCP")
		short := ndFrame(58, 135)[:14+40]
		Expect(isShared(short)).To(BeFalse(), "no ICMPv6 type byte")
	})
})
