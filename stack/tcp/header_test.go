package tcp

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Header", func() {
	src, dst := IPFrom4([4]byte{1, 2, 3, 4}), IPFrom4([4]byte{5, 6, 7, 8})

	DescribeTable("Emit then Parse gives back the same representation",
		func(r Repr) {
			b := make([]byte, r.HeaderLen()+len(r.Payload))
			hl := r.Emit(b)
			Expect(hl % 4).To(BeZero())
			Expect(hl).To(BeNumerically("<=", MaxHeaderLen))
			copy(b[hl:], r.Payload)
			setV4Checksum(b, src, dst)
			Expect(VerifyChecksum(b, v4sum(src, dst, len(b)))).To(BeTrue())
			got, err := Parse(b)
			Expect(err).NotTo(HaveOccurred())
			if len(r.Payload) == 0 {
				r.Payload = got.Payload[:0]
			}
			Expect(got).To(Equal(r))
			Expect(Header(b).DataOffset()).To(Equal(hl))
		},
		Entry("bare ACK", Repr{SrcPort: 80, DstPort: 1234, Seq: 1, Ack: 2, Flags: FlagACK, Window: 100}),
		Entry("SYN with every option", Repr{SrcPort: 1, DstPort: 2, Seq: 0xfffffff0, Flags: FlagSYN, Window: 65535,
			MSS: 1460, HasWScale: true, WScale: 7, SACKPermitted: true, HasTS: true, TSVal: 1, TSEcr: 0}),
		Entry("SYN without timestamps", Repr{Flags: FlagSYN, MSS: 536, SACKPermitted: true}),
		Entry("data with timestamps and 3 SACK blocks", Repr{Flags: FlagACK | FlagPSH, HasTS: true, TSVal: 9, TSEcr: 8,
			NumSACK: 3, SACK: [4]SACKBlock{{10, 20}, {30, 40}, {50, 60}}, Payload: []byte("payload")}),
		Entry("4 SACK blocks without timestamps", Repr{Flags: FlagACK, NumSACK: 4,
			SACK: [4]SACKBlock{{10, 20}, {30, 40}, {50, 60}, {70, 80}}}),
		Entry("FIN+RST+URG flags", Repr{Flags: FlagFIN | FlagRST | FlagURG | FlagECE | FlagCWR, Urgent: 3}),
	)

	DescribeTable("rejects malformed segments and options",
		func(b []byte, want error) {
			_, err := Parse(b)
			Expect(err).To(MatchError(want))
		},
		Entry("too short", make([]byte, 19), ErrTruncated),
		Entry("data offset below 20", hdr(4, nil), ErrBadDataOffset),
		Entry("data offset beyond the segment", append(hdr(6, nil), 1, 1), ErrBadDataOffset),
		Entry("option length 0", hdr(6, []byte{5, 0, 0, 0}), ErrBadOption),
		Entry("option length 1", hdr(6, []byte{30, 1, 0, 0}), ErrBadOption),
		Entry("option running past the header", hdr(6, []byte{1, 1, 30, 9}), ErrBadOption),
		Entry("kind without a length byte", hdr(6, []byte{1, 1, 1, 2}), ErrBadOption),
		Entry("MSS of length 3", hdr(6, []byte{2, 3, 1, 0}), ErrBadOption),
		Entry("window scale of length 4", hdr(6, []byte{3, 4, 1, 1}), ErrBadOption),
		Entry("SACK-permitted of length 3", hdr(6, []byte{4, 3, 0, 0}), ErrBadOption),
		Entry("SACK of length 6", hdr(7, []byte{5, 6, 0, 0, 0, 0, 0, 0}), ErrBadOption),
		Entry("timestamps of length 8", hdr(8, []byte{8, 8, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1}), ErrBadOption),
	)

	It("skips unknown options and stops at EOL", func() {
		r, err := Parse(hdr(8, []byte{30, 4, 9, 9, 2, 4, 5, 0xb4, 0, 2, 4, 1}))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.MSS).To(BeEquivalentTo(1460))
	})

	It("counts malformed input and bad checksums at the stack", func() {
		h := newHarness(DefaultConfig())
		h.s.Input(0, h.remote, h.local, hdr(6, []byte{2, 3, 1, 0}))
		b := hdr(5, nil)
		setV4Checksum(b, h.remote, h.local)
		b[4] ^= 0x10
		h.s.Input(0, h.remote, h.local, b)
		b = hdr(6, []byte{2, 3, 1, 0})
		setV4Checksum(b, h.remote, h.local)
		h.s.Input(0, h.remote, h.local, b)
		st := h.s.Stats()
		Expect(st.InErrs).To(BeEquivalentTo(3))
		Expect(st.InCsumErrors).To(BeEquivalentTo(2))
		Expect(st.Drops.BadOption).To(BeEquivalentTo(1))
		h.none()
	})
})

// hdr builds a header with the given data offset (in words) and options.
func hdr(words int, opts []byte) []byte {
	b := make([]byte, 20+len(opts))
	b[12] = byte(words) << 4
	b[13] = byte(FlagACK)
	copy(b[20:], opts)
	return b
}
