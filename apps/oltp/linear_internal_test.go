package oltp

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/savanna-sim/savanna/apps/appcost"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
)

// linearBound is the work an input of size bytes delivered in calls
// pieces may cost: each byte examined, moved or copied a bounded number
// of times, and a few units per call (the call and the header of the
// packet still arriving).
func linearBound(size, calls int) uint64 { return uint64(3*size + 8*calls) }

// largestResultSet is a result set of maxColumns columns, a thousand
// rows of one byte per column and a row in the largest packet there is
// (MaxPayload-1 bytes of payload): about 24 MiB in 5,100 packets.
func largestResultSet() []byte {
	cols := make([]string, maxColumns)
	small := make([]string, maxColumns)
	big := make([]string, maxColumns)
	for i := range cols {
		cols[i] = "c" + strconv.Itoa(i)
		small[i] = "x"
		// A value of 4093 bytes takes 4096 with its length (0xfc and
		// two bytes): the last is 2 bytes shorter, to end the payload
		// at MaxPayload-1.
		big[i] = string(bytes.Repeat([]byte("v"), 4093))
	}
	big[maxColumns-1] = big[0][:4091]
	rows := make([][]string, 0, 1001)
	for range 1000 {
		rows = append(rows, small)
	}
	rows = append(rows, big)
	b, _ := AppendResultSet(nil, 1, "t", cols, rows, statusInTrans)
	return b
}

var _ = Describe("a large response or statement that arrives in pieces", func() {
	var rs []byte
	BeforeEach(func() {
		if rs == nil {
			rs = largestResultSet()
		}
	})

	It("holds a row in the largest packet", func() {
		off := len(rs) - (HeaderLen + MaxPayload - 1) - (HeaderLen + 5)
		p, _, err := ParsePacket(rs[off:])
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Payload()).To(HaveLen(MaxPayload - 1))
	})

	// Byte by byte is millions of calls: a second or two, hence "slow";
	// the 1460-byte pieces check the same bound.
	slow := func(piece int) Labels {
		if piece == 1 {
			return Label("slow")
		}
		return nil
	}
	for _, piece := range []int{1, 1460} {
		It(fmt.Sprintf("costs the result set parser linear work in %d-byte pieces", piece), slow(piece), func() {
			var p responseParser
			calls := (len(rs) + piece - 1) / piece
			bound := linearBound(len(rs), calls)
			for end := piece; ; end += piece {
				end = min(end, len(rs))
				r, n, err := p.parse(rs[:end])
				if p.work > bound {
					Fail(fmt.Sprintf("work %d exceeds the linear bound %d after %d of %d bytes", p.work, bound, end, len(rs)))
				}
				if end < len(rs) {
					// Plain checks: a matcher per byte would cost more
					// than the parse it checks.
					if !errors.Is(err, ErrIncomplete) {
						Fail(fmt.Sprintf("after %d of %d bytes: %v", end, len(rs), err))
					}
					continue
				}
				Expect(err).NotTo(HaveOccurred())
				Expect(n).To(Equal(len(rs)))
				Expect(r).To(Equal(Response{Kind: ResponseResultSet, Columns: maxColumns, Rows: 1001}))
				break
			}
			GinkgoWriter.Printf("result set of %d bytes in %d calls: work %d (bound %d)\n", len(rs), calls, p.work, bound)
		})

		It(fmt.Sprintf("costs the server's thread linear work: the largest statement in %d-byte pieces", piece), slow(piece), func() {
			sql := []byte("SELECT c FROM t WHERE k = 1 /*")
			sql = append(sql, bytes.Repeat([]byte("-"), MaxPayload-1-1-len(sql)-2)...)
			sql = append(sql, "*/"...)
			msg := AppendQuery(nil, sql)
			Expect(msg).To(HaveLen(HeaderLen + MaxPayload - 1))

			srv := &Server{cfg: ServerConfig{}.withDefaults(), threads: map[int]*thread{}}
			t := &thread{srv: srv}
			m := &hw.CountingMeter{}
			calls := (len(msg) + piece - 1) / piece
			bound := linearBound(len(msg), calls)
			for off := 0; off < len(msg); off += piece {
				// What Run does with a read of this piece.
				n := copy(t.room(), msg[off:min(off+piece, len(msg))])
				t.in = t.in[:len(t.in)+n]
				if !t.execute(m) {
					Fail(fmt.Sprintf("the connection ended after %d bytes", off))
				}
				if t.work > bound {
					Fail(fmt.Sprintf("work %d exceeds the linear bound %d after %d of %d bytes", t.work, bound, off, len(msg)))
				}
			}
			Expect(srv.stats.Queries).To(BeEquivalentTo(1))
			Expect(srv.byClass[ClassPointSelect]).To(BeEquivalentTo(1))
			Expect(t.in).To(BeEmpty())
			Expect(m.Counts[appcost.ParseByte]).To(BeEquivalentTo(len(sql)))
			GinkgoWriter.Printf("statement of %d bytes in %d reads: work %d (bound %d)\n", len(msg), calls, t.work, bound)
		})
	}

	It("answers a select list beyond MySQL's column limit with an error, not a result set", func() {
		srv := &Server{cfg: ServerConfig{}.withDefaults(), threads: map[int]*thread{}}
		t := &thread{srv: srv}
		t.in = AppendQuery(nil, []byte("SELECT "+string(bytes.Repeat([]byte("a,"), maxColumns))+"a FROM t"))
		Expect(t.execute(&hw.CountingMeter{})).To(BeTrue())
		r, n, err := ParseResponse(t.out)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(len(t.out)))
		Expect(r).To(Equal(Response{Kind: ResponseError, ErrorCode: 1117}))
	})
})
