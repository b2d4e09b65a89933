package resp_test

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/resp"
)

// outcome is how a parse of a whole input ended: its commands, then
// "end" (every byte consumed), "incomplete", or the protocol error's
// message.
type outcome struct {
	cmds [][]string
	end  string
}

// wholeParse parses b with ParseCommandLimits, command after command.
func wholeParse(b []byte, lim resp.Limits) outcome {
	var o outcome
	var args [][]byte
	for len(b) > 0 {
		var n int
		var err error
		args, n, err = resp.ParseCommandLimits(b, args, lim)
		if errors.Is(err, resp.ErrIncomplete) {
			o.end = "incomplete"
			return o
		}
		var pe *resp.ProtocolError
		if errors.As(err, &pe) {
			o.end = pe.Msg
			return o
		}
		o.cmds = append(o.cmds, strs(args))
		b = b[n:]
	}
	o.end = "end"
	return o
}

// feedParse feeds b to p in the pieces cuts gives (lengths, used in
// turn and again), as a stream delivers it.
func feedParse(p *resp.Parser, b []byte, cuts []int) outcome {
	var o outcome
	for i := 0; len(b) > 0; i++ {
		k := len(b)
		if len(cuts) > 0 {
			k = min(len(b), max(1, cuts[i%len(cuts)]))
		}
		piece := b[:k]
		b = b[k:]
		for len(piece) > 0 {
			n, done, err := p.Feed(piece)
			piece = piece[n:]
			if err != nil {
				var pe *resp.ProtocolError
				if errors.As(err, &pe) {
					o.end = pe.Msg
				} else {
					o.end = err.Error()
				}
				return o
			}
			if done {
				o.cmds = append(o.cmds, strs(p.Args()))
				p.Next()
			}
		}
	}
	o.end = "end"
	if p.InRequest() {
		o.end = "incomplete"
	}
	return o
}

// meter is a Budget that grants up to limit bytes and records the most
// it granted at once.
type meter struct {
	limit, held, peak int
}

var errRefused = errors.New("refused")

func (m *meter) Reserve(n int) error {
	if m.held+n > m.limit {
		return errRefused
	}
	m.held += n
	m.peak = max(m.peak, m.held)
	return nil
}

func (m *meter) Release(n int) { m.held -= n }

func multibulk(args ...[]byte) []byte { return resp.AppendCommand(nil, args...) }

var _ = Describe("the resumable parser", func() {
	It("gives the commands the whole-buffer parse gives, however the input is split", func() {
		var in []byte
		in = append(in, multibulk([]byte("SET"), []byte("k"), []byte("v\r\n"))...)
		in = append(in, "PING  hello\tworld\r\n\r\n*0\r\n*-1\r\n"...)
		in = append(in, multibulk([]byte("MSET"), bytes.Repeat([]byte("x"), 40_000), []byte(""))...)
		in = append(in, "*2\n$3\nGET\r\n$4\nabcd\r\n"...)
		lim := resp.DefaultLimits()
		want := wholeParse(in, lim)
		Expect(want.end).To(Equal("end"))
		Expect(want.cmds).To(HaveLen(7))
		for _, cuts := range [][]int{nil, {1}, {2, 3, 5}, {1460}, {7, 40_000}} {
			Expect(feedParse(resp.NewParser(lim, nil), in, cuts)).To(Equal(want), "cuts %v", cuts)
		}
	})

	DescribeTable("refuses what the whole-buffer parse refuses, with its message, fed a byte at a time",
		func(in string) {
			lim := resp.Limits{MaxArgs: 2, MaxBulk: 4, MaxInline: 8}
			want := wholeParse([]byte(in), lim)
			Expect(want.end).NotTo(Or(Equal("end"), Equal("incomplete")))
			Expect(feedParse(resp.NewParser(lim, nil), []byte(in), []int{1})).To(Equal(want))
		},
		Entry("too many elements", "*3\r\n"),
		Entry("bulk too long", "*1\r\n$5\r\n"),
		Entry("inline line too long", "PING 1234567\r\n"),
		Entry("inline line too long before its end", "PING 12345678"),
		Entry("too many inline words", "A B C\r\n"),
		Entry("missing $", "*1\r\n+PING\r\n"),
		Entry("empty bulk header", "*1\r\n\r\n"),
		Entry("bulk without CRLF", "*1\r\n$4\r\nPINGxx"),
		Entry("header line too long", "*1\r\n$"+string(bytes.Repeat([]byte("1"), 80))),
		Entry("bad count", "*x\r\n"),
	)

	// Issue 17, finding 3: the whole-buffer parse restarted from a
	// command's first byte whenever it was incomplete, so a command fed
	// in k pieces cost k times its size. The resumable parser looks at
	// each byte once.
	It("examines each byte of a 100,000-argument command fed a byte at a time once", func() {
		args := make([][]byte, 100_000)
		for i := range args {
			args[i] = []byte(strconv.Itoa(i))
		}
		in := multibulk(args...)
		p := resp.NewParser(resp.DefaultLimits(), nil)
		for i := range in {
			n, done, err := p.Feed(in[i : i+1])
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(Equal(1))
			Expect(done).To(Equal(i == len(in)-1))
		}
		Expect(p.Args()).To(HaveLen(100_000))
		Expect(string(p.Args()[99_999])).To(Equal("99999"))
		Expect(p.Examined()).To(BeEquivalentTo(len(in)))
	})

	It("examines each byte of a 7 MB bulk in 1,460-byte segments once, into one allocation of its size", func() {
		val := bytes.Repeat([]byte("0123456789"), 700_000)
		in := multibulk([]byte("SET"), []byte("k"), val)
		m := &meter{limit: 1 << 30}
		p := resp.NewParser(resp.DefaultLimits(), m)
		Expect(feedParse(p, in, []int{1460}).cmds).To(HaveLen(1))
		Expect(p.Examined()).To(BeEquivalentTo(len(in)))
		// The value's own allocation and a little for the short
		// arguments: no doubling buffer.
		Expect(m.peak).To(BeNumerically("<", len(val)+2048))
		Expect(m.peak).To(BeNumerically(">=", len(val)))
	})

	It("lets a reader read a big argument straight into place", func() {
		val := bytes.Repeat([]byte("v"), 100_000)
		in := multibulk([]byte("SET"), []byte("k"), val)
		p := resp.NewParser(resp.DefaultLimits(), nil)
		hdr := bytes.Index(in, val)
		n, done, err := p.Feed(in[:hdr])
		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(BeFalse())
		Expect(n).To(Equal(hdr))
		d := p.Direct()
		Expect(d).To(HaveLen(len(val)))
		copy(d, val[:60_000])
		p.Advance(60_000)
		Expect(p.Direct()).To(HaveLen(40_000))
		n, done, err = p.Feed(in[hdr+60_000:])
		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(BeTrue())
		Expect(n).To(Equal(len(in) - hdr - 60_000))
		Expect(p.Args()[2]).To(Equal(val))
		Expect(p.Examined()).To(BeEquivalentTo(len(in)))
	})

	It("reserves every allocation from its budget, fails with the budget's refusal, and gives all back", func() {
		m := &meter{limit: 50_000}
		p := resp.NewParser(resp.Limits{MaxBulk: 1 << 30}, m)
		small := multibulk([]byte("SET"), []byte("k"), []byte("v"))
		_, done, err := p.Feed(small)
		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(BeTrue())
		Expect(m.held).To(Equal(p.Held()))
		p.Next()

		// The 512 MiB announcement is refused before anything is
		// allocated for it; the refusal sticks.
		huge := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n")
		_, _, err = p.Feed(huge)
		Expect(err).To(MatchError(errRefused))
		_, _, err = p.Feed([]byte("xx"))
		Expect(err).To(MatchError(errRefused))
		Expect(m.peak).To(BeNumerically("<", 50_000))
		p.Free()
		Expect(p.Held()).To(BeZero())
		Expect(m.held).To(BeZero())
	})

	It("drops a large command's buffers at Next, keeping small ones for reuse", func() {
		m := &meter{limit: 1 << 30}
		p := resp.NewParser(resp.DefaultLimits(), m)
		args := make([][]byte, 5000)
		for i := range args {
			args[i] = bytes.Repeat([]byte("a"), 100)
		}
		_, done, err := p.Feed(multibulk(args...))
		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(BeTrue())
		Expect(p.Held()).To(BeNumerically(">", 500_000))
		p.Next()
		Expect(p.Held()).To(BeZero())
		_, done, err = p.Feed(multibulk([]byte("PING")))
		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(BeTrue())
		p.Next()
		kept := p.Held()
		Expect(kept).To(BeNumerically(">", 0))
		Expect(kept).To(BeNumerically("<", 1024))
		Expect(m.held).To(Equal(kept))
	})
})

var _ = Describe("a store's footprint", func() {
	It("bounds the reply and the memory growth of a command before it runs", func() {
		s := resp.NewStore()
		big := bytes.Repeat([]byte("b"), 100_000)
		cmds := [][][]byte{
			{[]byte("SET"), []byte("k"), big},
			{[]byte("GET"), []byte("k")},
			{[]byte("MSET"), []byte("a"), []byte("1"), []byte("b"), big},
			{[]byte("MGET"), []byte("a"), []byte("b"), []byte("zz")},
			{[]byte("INCR"), []byte("n")},
			{[]byte("SET"), []byte("k"), []byte("v"), []byte("GET")},
			{[]byte("ECHO"), big},
			{[]byte("DEL"), []byte("a"), []byte("b")},
		}
		for _, keep := range []int{resp.BigArg, 1 << 40} {
			for _, c := range cmds {
				f := s.Footprint(c, keep)
				kept := int64(0)
				for _, a := range c[1:] {
					if len(a) >= keep {
						kept += int64(len(a))
					}
				}
				before := s.Memory()
				out := s.ExecuteOwned(nil, c, keep)
				Expect(len(out)).To(BeNumerically("<=", f.Reply), "%s", c[0])
				Expect(s.Memory()-before).To(BeNumerically("<=", f.Alloc+kept), "%s", c[0])
			}
		}
		Expect(s.Footprint(cmds[0], 1).DenyOOM).To(BeTrue())
		Expect(s.Footprint(cmds[1], 1).DenyOOM).To(BeFalse())
		Expect(s.Footprint([][]byte{[]byte("SET"), []byte("k")}, 1).DenyOOM).To(BeFalse(), "wrong arity is not refused for memory")
	})

	It("keeps a given value without copying it, and copies otherwise", func() {
		s := resp.NewStore()
		v := bytes.Repeat([]byte("v"), resp.BigArg)
		s.ExecuteOwned(nil, [][]byte{[]byte("SET"), []byte("k"), v}, resp.BigArg)
		v[0] = 'X' // the store holds this very allocation
		Expect(string(s.Execute(nil, [][]byte{[]byte("GET"), []byte("k")})[:9])).To(Equal(fmt.Sprintf("$%d\r\nX", resp.BigArg)))
		w := bytes.Repeat([]byte("w"), resp.BigArg)
		s.Execute(nil, [][]byte{[]byte("SET"), []byte("k"), w})
		w[0] = 'X'
		Expect(string(s.Execute(nil, [][]byte{[]byte("GET"), []byte("k")})[:9])).To(Equal(fmt.Sprintf("$%d\r\nw", resp.BigArg)))
		Expect(s.Memory()).To(BeEquivalentTo(1 + resp.BigArg + resp.EntryOverhead))
		s.Execute(nil, [][]byte{[]byte("FLUSHALL")})
		Expect(s.Memory()).To(BeZero())
	})
})
