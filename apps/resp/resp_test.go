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
		Expect(run(s, "CONFIG", "GET", "save")).To(Equal("*0\r\n"))
		Expect(run(s, "SET", "k")).To(HavePrefix("-ERR wrong number of arguments for 'set'"))
		Expect(run(s, "FROB")).To(Equal("-ERR unknown command 'FROB'\r\n"))
		st := s.Stats()
		Expect(st.Commands).To(Equal(uint64(13)))
		Expect(st.Errors).To(Equal(uint64(3)))
		Expect(st.ByName["SET"]).To(Equal(uint64(2)))
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
