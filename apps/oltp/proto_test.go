package oltp_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/oltp"
)

var _ = Describe("the MySQL protocol", func() {
	It("carries a COM_QUERY in one packet with sequence id 0", func() {
		b := oltp.AppendQuery(nil, []byte("SELECT 1"))
		p, n, err := oltp.ParsePacket(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(len(b)))
		Expect(p.Seq()).To(BeZero())
		cmd, err := oltp.ParseCommand(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmd.Code).To(Equal(byte(oltp.ComQuery)))
		Expect(string(cmd.Arg)).To(Equal("SELECT 1"))
	})

	It("says a short buffer is incomplete, at every cut", func() {
		b := oltp.AppendQuery(nil, []byte("UPDATE t SET a = 1"))
		for cut := 0; cut < len(b); cut++ {
			_, _, err := oltp.ParsePacket(b[:cut])
			Expect(errors.Is(err, oltp.ErrIncomplete)).To(BeTrue(), "cut %d", cut)
		}
	})

	DescribeTable("length-encoded integers round-trip",
		func(v uint64, size int) {
			b := oltp.AppendLenEnc(nil, v)
			Expect(b).To(HaveLen(size))
			got, n, err := oltp.ParseLenEnc(b)
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(Equal(size))
			Expect(got).To(Equal(v))
		},
		Entry("one byte", uint64(250), 1),
		Entry("two bytes", uint64(251), 3),
		Entry("two bytes, top", uint64(65535), 3),
		Entry("three bytes", uint64(65536), 4),
		Entry("eight bytes", uint64(1<<24), 9),
	)

	DescribeTable("responses parse whole and report their kind",
		func(build func() []byte, kind oltp.ResponseKind, cols, rows int) {
			b := build()
			r, n, err := oltp.ParseResponse(b)
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(Equal(len(b)))
			Expect(r.Kind).To(Equal(kind))
			Expect(r.Columns).To(Equal(cols))
			Expect(r.Rows).To(Equal(rows))
			for cut := 0; cut < len(b); cut++ {
				_, _, err := oltp.ParseResponse(b[:cut])
				Expect(errors.Is(err, oltp.ErrIncomplete)).To(BeTrue(), "cut %d", cut)
			}
		},
		Entry("OK", func() []byte { return oltp.AppendOK(nil, 1, 1, 0, 2) }, oltp.ResponseOK, 0, 0),
		Entry("ERR", func() []byte { return oltp.AppendError(nil, 1, 1040, "08004", "Too many connections") }, oltp.ResponseError, 0, 0),
		Entry("result set", func() []byte {
			b, _ := oltp.AppendResultSet(nil, 1, "t", []string{"a", "b", "c"}, [][]string{{"1", "2", "3"}, {"4", "5", "6"}}, 1)
			return b
		}, oltp.ResponseResultSet, 3, 2),
		Entry("empty result set", func() []byte {
			b, _ := oltp.AppendResultSet(nil, 1, "t", []string{"a"}, nil, 1)
			return b
		}, oltp.ResponseResultSet, 1, 0),
	)

	It("numbers a result set's packets in sequence", func() {
		b, next := oltp.AppendResultSet(nil, 1, "t", []string{"a", "b"}, [][]string{{"1", "2"}}, 1)
		// column count, 2 definitions, EOF, 1 row, EOF
		Expect(next).To(Equal(uint8(7)))
		seq := uint8(1)
		for len(b) > 0 {
			p, n, err := oltp.ParsePacket(b)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Seq()).To(Equal(seq))
			seq++
			b = b[n:]
		}
	})

	It("refuses malformed responses with an error naming the fault, not a panic", func() {
		colsThenRow := oltp.AppendPacket(nil, 1, []byte{0x01})
		colsThenRow = oltp.AppendPacket(colsThenRow, 2, []byte("def"))
		colsThenRow = oltp.AppendPacket(colsThenRow, 3, []byte{0x01, 'x'})
		for _, b := range [][]byte{
			oltp.AppendPacket(nil, 1, nil),
			oltp.AppendPacket(nil, 1, []byte{0xff}),
			oltp.AppendPacket(nil, 1, []byte{0xfb}),
			oltp.AppendPacket(nil, 1, []byte{0x02, 0x00}),
			colsThenRow,
			{0xff, 0xff, 0xff, 0, 1},
		} {
			_, _, err := oltp.ParseResponse(b)
			Expect(errors.Is(err, oltp.ErrMalformed)).To(BeTrue(), "%x: %v", b, err)
		}
	})
})
