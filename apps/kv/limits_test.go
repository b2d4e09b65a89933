package kv_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/kv"
)

// peer is a client on one end of a net.Pipe whose other end the server
// serves; done closes when the server has finished with it.
type peer struct {
	c    net.Conn
	r    *bufio.Reader
	done chan struct{}
}

func connect(srv *kv.Server) *peer {
	c, s := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeConn(s)
	}()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return &peer{c: c, r: bufio.NewReader(c), done: done}
}

// reply reads one reply: a line, and a bulk string's bytes after it; or
// "closed" when the server closed the connection.
func (p *peer) reply() string {
	l, err := p.r.ReadString('\n')
	if err != nil {
		return "closed"
	}
	if l[0] == '$' && l[1] != '-' {
		n, _ := strconv.Atoi(strings.TrimSpace(l[1:]))
		b := make([]byte, n+2)
		if _, err := io.ReadFull(p.r, b); err != nil {
			return "closed"
		}
		return l + string(b)
	}
	return l
}

// do sends a command and reads its reply.
func (p *peer) do(args ...string) string {
	if _, err := io.WriteString(p.c, cmd(args...)); err != nil {
		return "closed"
	}
	return p.reply()
}

func (p *peer) closedByServer(within time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(within):
		return false
	}
}

func newServer(lim kv.Limits) *kv.Server {
	srv, err := kv.New(lim)
	Expect(err).NotTo(HaveOccurred())
	return srv
}

// Issue 17, finding 1: live kv buffered each connection up to max_bulk,
// doubling and then copying into the store, and nothing bounded the sum.
var _ = Describe("kv's memory guarantee", func() {
	It("holds no more than maxmemory plus each connection's allowance, whatever huge SETs arrive at once", Label("slow"), func() {
		const maxmem = 64 << 20
		srv := newServer(kv.Limits{MaxMemory: maxmem})
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap0 := ms.HeapAlloc

		stop := make(chan struct{})
		sampled := make(chan [2]uint64)
		go func() {
			var maxUsed, maxHeap uint64
			var ms runtime.MemStats
			for {
				select {
				case <-stop:
					sampled <- [2]uint64{maxUsed, maxHeap}
					return
				case <-time.After(2 * time.Millisecond):
				}
				maxUsed = max(maxUsed, uint64(srv.Stats().UsedMemory))
				runtime.ReadMemStats(&ms)
				maxHeap = max(maxHeap, ms.HeapAlloc)
			}
		}()

		// 12 clients announce 512 MiB each (Redis's proto-max-bulk-len)
		// and send 24 MiB of it; 12 announce 8 MiB and send it all.
		const clients = 24
		results := make([]string, clients)
		var wg sync.WaitGroup
		for i := range clients {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				p := connect(srv)
				defer p.c.Close()
				announce, send := 512<<20, 24<<20
				if i >= 12 {
					announce, send = 8<<20, 8<<20
				}
				key := fmt.Sprintf("key%02d", i)
				hdr := fmt.Sprintf("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n", len(key), key, announce)
				if _, err := io.WriteString(p.c, hdr); err != nil {
					results[i] = "closed"
					return
				}
				chunk := bytes.Repeat([]byte{'v'}, 1<<20)
				for sent := 0; sent < send; sent += len(chunk) {
					if _, err := p.c.Write(chunk); err != nil {
						results[i] = "closed"
						return
					}
				}
				if send < announce {
					results[i] = "sent part"
					return
				}
				_, _ = io.WriteString(p.c, "\r\n")
				results[i] = p.reply()
			}()
		}
		wg.Wait()
		close(stop)
		peak := <-sampled

		allowance := uint64(kv.ConnAllowance) * (clients + 1)
		st := srv.Stats()
		Expect(st.UsedMemoryPeak).To(BeNumerically("<=", maxmem+allowance))
		Expect(peak[0]).To(BeNumerically("<=", maxmem+allowance))
		// The process's own heap: the stored values and little else.
		Expect(peak[1] - min(peak[1], heap0)).To(BeNumerically("<", 2*maxmem))

		Expect(results[:12]).To(HaveEach("closed"))
		Expect(results[12:]).To(ContainElement("+OK\r\n"))
		Expect(st.QueryBufferOOMClosed).To(BeNumerically(">=", 12))
		stored := 0
		for _, r := range results[12:] {
			if r == "+OK\r\n" {
				stored++
			}
		}
		Expect(st.Keys).To(Equal(stored))
		Expect(st.StoreMemory).To(BeNumerically("<=", maxmem))

		p := connect(srv)
		defer p.c.Close()
		Expect(p.do("PING")).To(Equal("+PONG\r\n"))
		Eventually(func() int64 { return srv.Stats().QueryBuffers }).Should(BeNumerically("<=", kv.ConnAllowance))
	})

	It("stores a large value in the one allocation it was read into", func() {
		srv := newServer(kv.Limits{})
		p := connect(srv)
		defer p.c.Close()
		val := bytes.Repeat([]byte("0123456789abcdef"), 4<<20) // 64 MiB
		req := []byte(cmd("SET", "k", ""))
		req = append(req[:len(req)-len("$0\r\n\r\n")], fmt.Sprintf("$%d\r\n", len(val))...)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := p.c.Write(req)
		Expect(err).NotTo(HaveOccurred())
		// Sent in TCP-sized segments, as a client's stream arrives.
		for i := 0; i < len(val); i += 1460 {
			_, err := p.c.Write(val[i:min(len(val), i+1460)])
			Expect(err).NotTo(HaveOccurred())
		}
		_, err = io.WriteString(p.c, "\r\n")
		Expect(err).NotTo(HaveOccurred())
		Expect(p.reply()).To(Equal("+OK\r\n"))
		runtime.ReadMemStats(&after)
		// Before: doubling buffers (128 MiB of them) and a copy into
		// the store: over 3 times the value.
		Expect(after.TotalAlloc - before.TotalAlloc).To(BeNumerically("<", len(val)+len(val)/8))
		st := srv.Stats()
		Expect(st.StoreMemory).To(BeNumerically(">=", len(val)))
		Expect(st.UsedMemory).To(BeNumerically("<", len(val)+kv.ConnAllowance))
	})

	It("refuses writes with Redis's -OOM once the store fills maxmemory, and takes them again when memory is freed", func() {
		srv := newServer(kv.Limits{MaxMemory: 1 << 20})
		p := connect(srv)
		defer p.c.Close()
		val := strings.Repeat("x", 1000)
		var last string
		n := 0
		for ; n < 2000; n++ {
			last = p.do("SET", "k"+strconv.Itoa(n), val)
			if last != "+OK\r\n" {
				break
			}
		}
		Expect(last).To(Equal("-OOM command not allowed when used memory > 'maxmemory'.\r\n"))
		Expect(n).To(BeNumerically(">", 900))
		Expect(p.do("MSET", "a", val, "b", val)).To(HavePrefix("-OOM"))
		Expect(p.do("GET", "k0")).To(HavePrefix("$1000\r\n"), "reads within the connection's allowance go on")
		Expect(p.do("DEL", "k0", "k1")).To(Equal(":2\r\n"), "DEL is not refused")
		Expect(p.do("SET", "again", val)).To(Equal("+OK\r\n"))
		st := srv.Stats()
		Expect(st.OOMRefused).To(BeEquivalentTo(2))
		Expect(st.UsedMemoryPeak).To(BeNumerically("<=", 1<<20+kv.ConnAllowance))
	})

	It("closes a client whose command outgrows client-query-buffer-limit", func() {
		srv := newServer(kv.Limits{QueryBufferLimit: 1 << 20, MaxBulk: 4 << 20})
		p := connect(srv)
		defer p.c.Close()
		_, _ = io.WriteString(p.c, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n")
		Expect(p.closedByServer(5 * time.Second)).To(BeTrue())
		Expect(srv.Stats().QueryBufferLimitClosed).To(BeEquivalentTo(1))
		q := connect(srv)
		defer q.c.Close()
		Expect(q.do("SET", "k", strings.Repeat("v", 500_000))).To(Equal("+OK\r\n"))
	})
})

// Issue 17, finding 3: a command fed in segments was parsed again from
// its first byte at every segment.
var _ = Describe("kv's reader", func() {
	It("looks at each byte of a 7.3 MB multibulk command sent in 1,460-byte segments once", func() {
		args := make([]string, 0, 600_001)
		args = append(args, "MSET")
		for i := 0; len(args) < 600_001; i++ {
			args = append(args, fmt.Sprintf("key:%08d", i), "v")
		}
		in := cmd(args...)
		Expect(len(in)).To(BeNumerically(">", 7_000_000))
		rd := kv.NewReader(&segments{b: []byte(in), n: 1460}, kv.Limits{})
		got, err := rd.ReadCommand()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(len(args)))
		Expect(rd.Examined()).To(BeEquivalentTo(len(in)))
		_, err = rd.ReadCommand()
		Expect(err).To(MatchError(io.EOF))
	})
})

// segments reads b n bytes at a time, as TCP segments arrive.
type segments struct {
	b []byte
	n int
}

func (s *segments) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), s.n)], s.b)
	s.b = s.b[k:]
	return k, nil
}

var _ = Describe("kv's client output buffer limit", func() {
	It("closes a client whose reply would reach the hard limit", func() {
		srv := newServer(kv.Limits{OutputBufferHard: 1 << 20})
		p := connect(srv)
		defer p.c.Close()
		Expect(p.do("SET", "big", strings.Repeat("b", 2<<20))).To(Equal("+OK\r\n"))
		Expect(p.do("GET", "big")).To(Equal("closed"))
		Expect(p.closedByServer(5 * time.Second)).To(BeTrue())
		Expect(srv.Stats().OutputBufferLimitClosed).To(BeEquivalentTo(1))
	})

	It("closes a pipelining client that does not read its replies, once they stay over the soft limit", func() {
		srv := newServer(kv.Limits{OutputBufferSoft: 256 << 10, OutputBufferSoftTime: 300 * time.Millisecond})
		setter := connect(srv)
		defer setter.c.Close()
		Expect(setter.do("SET", "v", strings.Repeat("v", 1<<20))).To(Equal("+OK\r\n"))

		p := connect(srv)
		defer p.c.Close()
		go func() {
			// Pipelined GETs, and no read at all.
			for range 16 {
				if _, err := io.WriteString(p.c, cmd("GET", "v")); err != nil {
					return
				}
			}
		}()
		Expect(p.closedByServer(5 * time.Second)).To(BeTrue())
		st := srv.Stats()
		Expect(st.OutputBufferLimitClosed).To(BeEquivalentTo(1))
		Expect(st.IdleTimeoutClosed).To(BeZero())
		Eventually(func() int64 { return srv.Stats().OutputBuffers }).Should(BeNumerically("<", kv.ConnAllowance))
	})
})

// Issue 17, finding 7: 20,000 idle connections locked new clients out
// for ever.
var _ = Describe("kv's idle timeout and maxclients", func() {
	It("closes idle clients after the timeout, and spares active ones", func() {
		srv := newServer(kv.Limits{Timeout: 300 * time.Millisecond})
		var idle []*peer
		for range 20 {
			p := connect(srv)
			defer p.c.Close()
			Expect(p.do("PING")).To(Equal("+PONG\r\n"))
			idle = append(idle, p)
		}
		active := connect(srv)
		defer active.c.Close()
		for range 10 {
			Expect(active.do("PING")).To(Equal("+PONG\r\n"))
			time.Sleep(100 * time.Millisecond)
		}
		for _, p := range idle {
			Expect(p.closedByServer(5 * time.Second)).To(BeTrue())
			Expect(p.reply()).To(Equal("closed"))
		}
		Expect(active.do("PING")).To(Equal("+PONG\r\n"))
		Expect(srv.Stats().IdleTimeoutClosed).To(BeEquivalentTo(20))
		Expect(srv.Stats().Clients).To(Equal(1))
	})

	It("closes a client that stops reading its replies, after the timeout", func() {
		srv := newServer(kv.Limits{Timeout: 300 * time.Millisecond})
		p := connect(srv)
		defer p.c.Close()
		go func() {
			for range 1000 {
				if _, err := io.WriteString(p.c, cmd("PING")); err != nil {
					return
				}
			}
		}()
		Expect(p.closedByServer(5 * time.Second)).To(BeTrue())
		Expect(srv.Stats().IdleTimeoutClosed).To(BeEquivalentTo(1))
	})

	It("refuses a client past maxclients with Redis's error, and admits one again when a slot frees", func() {
		srv := newServer(kv.Limits{MaxClients: 3})
		var ps []*peer
		for range 3 {
			p := connect(srv)
			defer p.c.Close()
			Expect(p.do("PING")).To(Equal("+PONG\r\n"))
			ps = append(ps, p)
		}
		extra := connect(srv)
		defer extra.c.Close()
		Expect(extra.reply()).To(Equal("-ERR max number of clients reached\r\n"))
		Expect(extra.closedByServer(5 * time.Second)).To(BeTrue())
		Expect(srv.Stats().MaxClientsRefused).To(BeEquivalentTo(1))

		ps[0].c.Close()
		Expect(ps[0].closedByServer(5 * time.Second)).To(BeTrue())
		again := connect(srv)
		defer again.c.Close()
		Expect(again.do("PING")).To(Equal("+PONG\r\n"))
	})

	It("lets new clients in once a slowloris crowd that filled maxclients times out", func() {
		srv := newServer(kv.Limits{MaxClients: 50, Timeout: 300 * time.Millisecond})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		var crowd []net.Conn
		for range 50 {
			c, err := net.Dial("tcp", ln.Addr().String())
			Expect(err).NotTo(HaveOccurred())
			defer c.Close()
			_, _ = io.WriteString(c, "*2\r\n$3\r\nGET\r\n") // and never the rest
			crowd = append(crowd, c)
		}
		Eventually(func() int { return srv.Stats().Clients }).Should(Equal(50))
		c, err := net.Dial("tcp", ln.Addr().String())
		Expect(err).NotTo(HaveOccurred())
		r := bufio.NewReader(c)
		l, _ := r.ReadString('\n')
		Expect(l).To(Equal("-ERR max number of clients reached\r\n"))
		c.Close()

		Eventually(func() int { return srv.Stats().Clients }, 5*time.Second).Should(BeZero())
		c, err = net.Dial("tcp", ln.Addr().String())
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		_, _ = io.WriteString(c, cmd("PING"))
		l, _ = bufio.NewReader(c).ReadString('\n')
		Expect(l).To(Equal("+PONG\r\n"))
		st := srv.Stats()
		Expect(st.IdleTimeoutClosed).To(BeEquivalentTo(50))
		Expect(st.MaxClientsRefused).To(BeEquivalentTo(1))
	})
})

var _ = Describe("kv's limits", func() {
	DescribeTable("refuses bad values by key",
		func(l kv.Limits, key string) {
			_, err := kv.New(l)
			Expect(err).To(MatchError(HavePrefix(key + ":")))
		},
		Entry("max_memory", kv.Limits{MaxMemory: 1000}, "max_memory"),
		Entry("query_buffer_limit", kv.Limits{QueryBufferLimit: 1000}, "query_buffer_limit"),
		Entry("output_buffer_hard", kv.Limits{OutputBufferHard: 1000}, "output_buffer_hard"),
		Entry("output_buffer_soft_time", kv.Limits{OutputBufferSoftTime: -time.Second}, "output_buffer_soft_time"),
		Entry("max_clients", kv.Limits{MaxClients: -1}, "max_clients"),
	)

	It("fills every default explicitly", func() {
		l := kv.Limits{}.WithDefaults()
		Expect(l).To(Equal(kv.Limits{MaxArgs: 1 << 20, MaxBulk: 512 << 20, MaxInline: 64 << 10,
			QueryBufferLimit: 1 << 30, MaxMemory: 1 << 30,
			OutputBufferHard: 1 << 30, OutputBufferSoft: 64 << 20, OutputBufferSoftTime: time.Minute,
			MaxClients: 10000, Timeout: 300 * time.Second}))
	})
})
