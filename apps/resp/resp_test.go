package resp_test

import (
	"errors"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/resp"
)

func strs(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

var _ = Describe("parsing requests", func() {
	It("reads pipelined array commands one by one, and waits for partial ones", func() {
		b := resp.AppendCommand(nil, []byte("SET"), []byte("k"), []byte("v\r\n"))
		b = resp.AppendCommand(b, []byte("GET"), []byte("k"))
		args, n, err := resp.ParseCommand(b, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(strs(args)).To(Equal([]string{"SET", "k", "v\r\n"}))
		args, m, err := resp.ParseCommand(b[n:], args)
		Expect(err).NotTo(HaveOccurred())
		Expect(strs(args)).To(Equal([]string{"GET", "k"}))
		Expect(n + m).To(Equal(len(b)))
		for cut := 0; cut < n; cut++ {
			_, _, err := resp.ParseCommand(b[:cut], nil)
			Expect(err).To(MatchError(resp.ErrIncomplete), "cut at %d", cut)
		}
	})

	It("reads inline commands as redis-cli and telnet send them", func() {
		args, n, err := resp.ParseCommand([]byte("PING\r\nGET x"), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(strs(args)).To(Equal([]string{"PING"}))
		Expect(n).To(Equal(6))
	})

	DescribeTable("rejects malformed requests with a protocol error",
		func(in string) {
			_, _, err := resp.ParseCommand([]byte(in), nil)
			var pe *resp.ProtocolError
			Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
		},
		Entry("bad count", "*x\r\n"),
		Entry("missing $", "*1\r\n+PING\r\n"),
		Entry("huge bulk", "*1\r\n$999999999999\r\n"),
		Entry("bulk without CRLF", "*1\r\n$4\r\nPINGxx"),
		Entry("CR without LF", "*1\r$4\r\n"),
	)
})

var _ = Describe("the store", func() {
	run := func(s *resp.Store, args ...string) string {
		bs := make([][]byte, len(args))
		for i, a := range args {
			bs[i] = []byte(a)
		}
		return string(s.Execute(nil, bs))
	}

	It("executes what redis-benchmark and redis-cli send", func() {
		s := resp.NewStore()
		Expect(run(s, "PING")).To(Equal("+PONG\r\n"))
		Expect(run(s, "set", "k", "v")).To(Equal("+OK\r\n"))
		Expect(run(s, "GET", "k")).To(Equal("$1\r\nv\r\n"))
		Expect(run(s, "GET", "nope")).To(Equal("$-1\r\n"))
		Expect(run(s, "INCR", "n")).To(Equal(":1\r\n"))
		Expect(run(s, "INCR", "k")).To(HavePrefix("-ERR value is not an integer"))
		Expect(run(s, "MSET", "a", "1", "b", "2")).To(Equal("+OK\r\n"))
		Expect(run(s, "MGET", "a", "x", "b")).To(Equal("*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n"))
		Expect(run(s, "EXISTS", "a", "b", "x")).To(Equal(":2\r\n"))
		Expect(run(s, "DEL", "a", "x")).To(Equal(":1\r\n"))
		Expect(run(s, "CONFIG", "GET", "save")).To(Equal("*2\r\n$4\r\nsave\r\n$0\r\n\r\n"))
		Expect(run(s, "SET", "k")).To(HavePrefix("-ERR wrong number of arguments for 'set'"))
		Expect(run(s, "FROB")).To(Equal("-ERR unknown command 'FROB', with args beginning with: \r\n"))
		st := s.Stats()
		Expect(st.Commands).To(Equal(uint64(13)))
		Expect(st.Errors).To(Equal(uint64(3)))
		Expect(st.ByName["SET"]).To(Equal(uint64(2)))
	})
})

var _ = Describe("the store's command table", func() {
	// Each entry runs its commands on a fresh store and expects the
	// concatenated replies, as Redis gives them.
	DescribeTable("answers as Redis does",
		func(cmds [][]string, want string) {
			s := resp.NewStore()
			var out []byte
			for _, c := range cmds {
				args := make([][]byte, len(c))
				for i, a := range c {
					args[i] = []byte(a)
				}
				out = s.Execute(out, args)
			}
			Expect(string(out)).To(Equal(want))
		},
		Entry("SET NX only when absent", [][]string{{"SET", "k", "1", "NX"}, {"SET", "k", "2", "nx"}, {"GET", "k"}}, "+OK\r\n$-1\r\n$1\r\n1\r\n"),
		Entry("SET XX only when present", [][]string{{"SET", "k", "1", "XX"}, {"SET", "k", "1"}, {"SET", "k", "2", "XX"}, {"GET", "k"}}, "$-1\r\n+OK\r\n+OK\r\n$1\r\n2\r\n"),
		Entry("SET GET returns the old value", [][]string{{"SET", "k", "1", "GET"}, {"SET", "k", "2", "GET"}}, "$-1\r\n$1\r\n1\r\n"),
		Entry("SET EX and PX are accepted", [][]string{{"SET", "k", "1", "EX", "10"}, {"SET", "k", "1", "PX", "5", "KEEPTTL"}}, "+OK\r\n+OK\r\n"),
		Entry("SET EX needs a positive time", [][]string{{"SET", "k", "1", "EX", "0"}}, "-ERR invalid expire time in 'set' command\r\n"),
		Entry("SET NX XX is a syntax error", [][]string{{"SET", "k", "1", "NX", "XX"}, {"SET", "k", "1", "FOO"}}, "-ERR syntax error\r\n-ERR syntax error\r\n"),
		Entry("DECR, INCRBY, DECRBY", [][]string{{"DECR", "n"}, {"INCRBY", "n", "43"}, {"DECRBY", "n", "2"}}, ":-1\r\n:42\r\n:40\r\n"),
		Entry("INCR overflow", [][]string{{"SET", "n", "9223372036854775807"}, {"INCR", "n"}}, "+OK\r\n-ERR increment or decrement would overflow\r\n"),
		Entry("DECRBY the minimum", [][]string{{"DECRBY", "n", "-9223372036854775808"}}, "-ERR decrement would overflow\r\n"),
		Entry("SELECT 0 only", [][]string{{"SELECT", "0"}, {"SELECT", "1"}}, "+OK\r\n-ERR DB index is out of range\r\n"),
		Entry("FLUSHDB and DBSIZE", [][]string{{"MSET", "a", "1", "b", "2"}, {"FLUSHDB"}, {"DBSIZE"}}, "+OK\r\n+OK\r\n:0\r\n"),
		Entry("UNLINK", [][]string{{"SET", "a", "1"}, {"UNLINK", "a", "b"}}, "+OK\r\n:1\r\n"),
		Entry("CLIENT SETNAME", [][]string{{"CLIENT", "SETNAME", "x"}}, "+OK\r\n"),
		Entry("COMMAND DOCS and COUNT", [][]string{{"COMMAND", "DOCS"}, {"COMMAND", "COUNT"}}, "*0\r\n:0\r\n"),
		Entry("CONFIG GET appendonly", [][]string{{"CONFIG", "GET", "appendonly"}}, "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"),
		Entry("unknown command names its arguments", [][]string{{"FOO", "a\r\nb", "c", "d", "e"}}, "-ERR unknown command 'FOO', with args beginning with: 'a  b' 'c' 'd' \r\n"),
	)

	It("counts unknown commands apart, so clients cannot grow ByName", func() {
		s := resp.NewStore()
		for _, name := range []string{"X1", "X2", "GET"} {
			s.Execute(nil, [][]byte{[]byte(name), []byte("k")})
		}
		st := s.Stats()
		Expect(st.Unknown).To(Equal(uint64(2)))
		Expect(st.ByName).To(Equal(map[string]uint64{"GET": 1}))
	})
})

var _ = Describe("parse limits", func() {
	lim := resp.Limits{MaxArgs: 2, MaxBulk: 4, MaxInline: 8}
	DescribeTable("refuses requests over the limits with Redis's texts",
		func(in, msg string) {
			_, _, err := resp.ParseCommandLimits([]byte(in), nil, lim)
			var pe *resp.ProtocolError
			Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
			Expect(pe.Msg).To(Equal(msg))
		},
		Entry("too many elements", "*3\r\n", "invalid multibulk length"),
		Entry("bulk too long", "*1\r\n$5\r\n", "invalid bulk length"),
		Entry("inline line too long", "PING 1234567\r\n", "too big inline request"),
		Entry("inline line too long before its end", "PING 12345678", "too big inline request"),
		Entry("too many inline words", "A B C\r\n", "invalid multibulk length"),
	)

	It("accepts what fits, and bare LF line ends as Redis does", func() {
		in := []byte("*2\n$3\nGET\r\n$4\nabcd\r\n+tail")
		args, n, err := resp.ParseCommandLimits(in, nil, lim)
		Expect(err).NotTo(HaveOccurred())
		Expect(strs(args)).To(Equal([]string{"GET", "abcd"}))
		Expect(n).To(Equal(len(in) - len("+tail")))
	})
})

var _ = Describe("skipping replies", func() {
	It("finds the end of every kind of reply", func() {
		for _, r := range []string{"+OK\r\n", "-ERR x\r\n", ":12\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*2\r\n$1\r\na\r\n:1\r\n"} {
			_, n, err := resp.SkipReply([]byte(r + "+tail"))
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(Equal(len(r)))
			_, _, err = resp.SkipReply([]byte(r[:len(r)-1]))
			Expect(err).To(MatchError(resp.ErrIncomplete))
		}
	})
})

func FuzzParseCommand(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"))
	f.Add([]byte("PING\r\n"))
	f.Add([]byte("*1\r\n$-1\r\n"))
	s := resp.NewStore()
	f.Fuzz(func(t *testing.T, b []byte) {
		var args [][]byte
		for len(b) > 0 {
			var n int
			var err error
			args, n, err = resp.ParseCommand(b, args)
			if err != nil || n == 0 {
				return
			}
			s.Execute(nil, args)
			b = b[n:]
		}
	})
}

func FuzzSkipReply(f *testing.F) {
	f.Add([]byte("*2\r\n$1\r\na\r\n:1\r\n"))
	f.Add([]byte("$-1\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, n, err := resp.SkipReply(b)
		if err == nil && (n <= 0 || n > len(b)) {
			t.Fatalf("length %d of %d", n, len(b))
		}
	})
}
