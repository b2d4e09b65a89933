package kv_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/kv"
)

// converse sends req to a fresh server connection in chunks of chunk
// bytes and returns everything it answers until it closes or goes quiet.
func converse(srv *kv.Server, req string, chunk int) string {
	c, s := net.Pipe()
	go srv.ServeConn(s)
	defer c.Close()
	out := make(chan string, 1)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			n, err := c.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				out <- b.String()
				return
			}
		}
	}()
	for i := 0; i < len(req); i += chunk {
		_, err := c.Write([]byte(req[i:min(len(req), i+chunk)]))
		if err != nil {
			break
		}
	}
	return <-out
}

func cmd(args ...string) string {
	var b strings.Builder
	b.WriteString("*")
	b.WriteString(itoa(len(args)))
	b.WriteString("\r\n")
	for _, a := range args {
		b.WriteString("$" + itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return b.String()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

var _ = Describe("kv server", func() {
	var srv *kv.Server
	BeforeEach(func() {
		var err error
		srv, err = kv.New(kv.Limits{MaxBulk: 1 << 20})
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("answers commands as Redis does",
		func(req, want string) {
			Expect(converse(srv, req, 1<<20)).To(Equal(want))
		},
		Entry("PING", cmd("PING"), "+PONG\r\n"),
		Entry("PING msg", cmd("PING", "hi"), "$2\r\nhi\r\n"),
		Entry("inline PING", "PING\r\n", "+PONG\r\n"),
		Entry("SET then GET", cmd("SET", "k", "v")+cmd("GET", "k"), "+OK\r\n$1\r\nv\r\n"),
		Entry("GET missing", cmd("GET", "nope"), "$-1\r\n"),
		Entry("empty value", cmd("SET", "e", "")+cmd("GET", "e"), "+OK\r\n$0\r\n\r\n"),
		Entry("DEL and EXISTS", cmd("MSET", "a", "1", "b", "2")+cmd("EXISTS", "a", "b", "c")+cmd("DEL", "a", "c")+cmd("EXISTS", "a"),
			"+OK\r\n:2\r\n:1\r\n:0\r\n"),
		Entry("INCR", cmd("INCR", "n")+cmd("INCR", "n")+cmd("INCRBY", "n", "40")+cmd("DECR", "n"), ":1\r\n:2\r\n:42\r\n:41\r\n"),
		Entry("INCR on text", cmd("SET", "t", "x")+cmd("INCR", "t"), "+OK\r\n-ERR value is not an integer or out of range\r\n"),
		Entry("MGET", cmd("MSET", "a", "1", "b", "2")+cmd("MGET", "a", "x", "b"), "+OK\r\n*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n"),
		Entry("CONFIG GET save", cmd("CONFIG", "GET", "save"), "*2\r\n$4\r\nsave\r\n$0\r\n\r\n"),
		Entry("CONFIG GET appendonly", cmd("CONFIG", "GET", "appendonly"), "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"),
		Entry("COMMAND DOCS", cmd("COMMAND", "DOCS"), "*0\r\n"),
		Entry("unknown command", cmd("FOO", "bar"), "-ERR unknown command 'FOO', with args beginning with: 'bar' \r\n"),
		Entry("wrong arity", cmd("GET"), "-ERR wrong number of arguments for 'get' command\r\n"),
		Entry("SET NX", cmd("SET", "k", "1", "NX")+cmd("SET", "k", "2", "NX")+cmd("GET", "k"), "+OK\r\n$-1\r\n$1\r\n1\r\n"),
		Entry("QUIT closes", cmd("QUIT")+cmd("PING"), "+OK\r\n"),
		Entry("absurd bulk length", "*1\r\n$99999999999\r\n", "-ERR Protocol error: invalid bulk length\r\n"),
		Entry("bulk over the limit", "*1\r\n$2000000\r\n", "-ERR Protocol error: invalid bulk length\r\n"),
		Entry("absurd array length", "*99999999\r\n", "-ERR Protocol error: invalid multibulk length\r\n"),
		Entry("missing $", "*1\r\n+PING\r\n", "-ERR Protocol error: expected '$', got '+'\r\n"),
		Entry("unterminated bulk", "*1\r\n$4\r\nPINGxx", "-ERR Protocol error: bulk string not terminated by CRLF\r\n"),
	)

	It("handles pipelining fed one byte at a time", func() {
		var req, want strings.Builder
		for i := 0; i < 50; i++ {
			k := "key" + itoa(i)
			req.WriteString(cmd("SET", k, "val"+itoa(i)) + cmd("GET", k))
			want.WriteString("+OK\r\n$" + itoa(len("val"+itoa(i))) + "\r\nval" + itoa(i) + "\r\n")
		}
		Expect(converse(srv, req.String(), 1)).To(Equal(want.String()))
		Expect(srv.Stats().Commands).To(BeEquivalentTo(100))
		Expect(srv.Stats().Keys).To(Equal(50))
	})

	It("serves clients on a kernel listener", func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		c, err := net.Dial("tcp", ln.Addr().String())
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		_, err = io.WriteString(c, cmd("SET", "x", "42")+cmd("INCR", "x"))
		Expect(err).NotTo(HaveOccurred())
		r := bufio.NewReader(c)
		l1, _ := r.ReadString('\n')
		l2, _ := r.ReadString('\n')
		Expect(l1 + l2).To(Equal("+OK\r\n:43\r\n"))
	})
})
