package ipv6_test

import (
	"encoding/binary"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

var _ = Describe("Packet and Repr (RFC 8200 section 3)", func() {
	It("round-trips every field of the fixed header through Emit and Parse", func() {
		r := ipv6.Repr{Src: src, Dst: dst, NextHeader: ipv6.NextUDP, PayloadLen: 12,
			HopLimit: 17, TrafficClass: 0xb8, FlowLabel: 0xabcde}
		b := make([]byte, ipv6.HeaderLen+12)
		r.Emit(ipv6.Packet(b))
		Expect(b[0] >> 4).To(Equal(uint8(6)))
		back, err := ipv6.Parse(ipv6.Packet(b))
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(r))
		p := ipv6.Packet(b)
		Expect(p.TrafficClass()).To(Equal(uint8(0xb8)))
		Expect(p.FlowLabel()).To(Equal(uint32(0xabcde)))
		Expect(p.Payload()).To(HaveLen(12))
	})

	It("keeps the flow label to 20 bits", func() {
		b := make([]byte, ipv6.HeaderLen)
		ipv6.Repr{FlowLabel: 0xfffffff, TrafficClass: 0x01}.Emit(ipv6.Packet(b))
		Expect(ipv6.Packet(b).FlowLabel()).To(Equal(uint32(0xfffff)))
		Expect(ipv6.Packet(b).TrafficClass()).To(Equal(uint8(0x01)))
	})

	DescribeTable("Check refuses what is not a packet",
		func(b []byte, want ipv6.Error) {
			_, err := ipv6.Check(b)
			Expect(err).To(Equal(want))
		},
		Entry("shorter than the fixed header", make([]byte, 39), ipv6.ErrTruncated),
		Entry("version 4", append([]byte{0x45}, make([]byte, 39)...), ipv6.ErrVersion),
		Entry("payload length past the frame", append([]byte{0x60, 0, 0, 0, 0, 9}, make([]byte, 34+8)...), ipv6.ErrTruncated),
	)

	It("trims Ethernet padding to the payload length", func() {
		p := packet(src, dst, ipv6.NextUDP, udp(8))
		q, err := ipv6.Check(append(p, 0, 0, 0, 0))
		Expect(err).NotTo(HaveOccurred())
		Expect(q).To(HaveLen(len(p)))
	})

	It("sums the pseudo-header of section 8.1 as a 40-byte block would", func() {
		// The pseudo-header laid out as section 8.1 draws it, summed by
		// the generic RFC 1071 code, is the oracle.
		var ph [40]byte
		copy(ph[0:16], src[:])
		copy(ph[16:32], dst[:])
		binary.BigEndian.PutUint32(ph[32:36], 70000)
		ph[39] = ipv6.NextTCP
		want := checksum.Fold(checksum.Add(0, ph[:]))
		got := checksum.Fold(ipv6.PseudoHeaderSum(src, dst, 70000, ipv6.NextTCP))
		Expect(got).To(Equal(want))
	})
})
