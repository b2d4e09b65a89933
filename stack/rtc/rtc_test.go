package rtc_test

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/rtc"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// within bounds every wait of the specs.
const within = 20 * time.Second

// echoServer answers every byte it gets with the same byte, taking them
// straight from segments (Receive), and closes on EOF.
func echoServer() rtc.AcceptFunc {
	return func(*rtc.Conn) rtc.Handler {
		var out []byte
		flush := func(c *rtc.Conn) {
			for len(out) > 0 {
				n, err := c.Write(out)
				out = out[n:]
				if err != nil || n == 0 {
					return
				}
			}
		}
		h := &direct{}
		h.receive = func(_ *rtc.Conn, p []byte) int {
			out = append(out, p...)
			return len(p)
		}
		buf := make([]byte, 1500)
		h.readable = func(c *rtc.Conn) {
			for {
				n, err := c.Read(buf)
				out = append(out, buf[:n]...)
				if errors.Is(err, io.EOF) {
					flush(c)
					_ = c.Close()
					return
				}
				if err != nil {
					break
				}
			}
			flush(c)
		}
		h.writable = flush
		return h
	}
}

var _ = Describe("run-to-completion connections over a ring pair", func() {
	It("echoes messages of every size from 1 byte to three segments, read with Read on one side and Receive on the other", func() {
		w := newWire()
		DeferCleanup(w.stop)
		ln, err := rtc.Listen(w.b, 7101, 0, echoServer())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(ln.Close)

		rng := rand.New(rand.NewPCG(1, 2))
		msgs := make([][]byte, 300)
		for i := range msgs {
			msgs[i] = make([]byte, 1+rng.IntN(4400))
			for j := range msgs[i] {
				msgs[i][j] = byte(rng.Uint32())
			}
		}
		done := make(chan error, 1)
		var got []byte
		i, echoed := 0, 0
		buf := make([]byte, 999)
		send := func(c *rtc.Conn) {
			if n, err := c.Write(msgs[i]); err != nil || n != len(msgs[i]) {
				done <- orFail("write", errors.Join(err, io.ErrShortWrite))
			}
		}
		h := &funcs{}
		h.readable = func(c *rtc.Conn) {
			for {
				n, err := c.Read(buf)
				got = append(got, buf[:n]...)
				if errors.Is(err, rtc.ErrWouldBlock) {
					break
				}
				if err != nil {
					done <- orFail("read", err)
					return
				}
			}
			for i < len(msgs) && len(got) >= len(msgs[i]) {
				if !bytes.Equal(got[:len(msgs[i])], msgs[i]) {
					done <- errors.New("echo differs from the request")
					return
				}
				got = got[len(msgs[i]):]
				echoed++
				i++
				if i == len(msgs) {
					done <- c.Close()
					return
				}
				send(c)
			}
		}
		h.closed = func(_ *rtc.Conn, err error) { done <- orFail("closed", err) }
		var d dialed
		Eventually(w.dial(7101, h)).WithTimeout(within).Should(Receive(&d))
		Expect(d.err).NotTo(HaveOccurred())
		on(d.c, func() { send(d.c) })
		var res error
		Eventually(done).WithTimeout(within).Should(Receive(&res))
		Expect(res).NotTo(HaveOccurred())
		Expect(echoed).To(Equal(len(msgs)))
		Expect(ln.Stats()).To(Equal(rtc.ListenerStats{Accepted: 1}))
	})

	It("carries 16 MiB whose CRC-32C matches across 256 wraps of 64 KiB buffers, part taken from segments and part read", func() {
		const total = 16 << 20
		w := newSmallWire(64 << 10)
		DeferCleanup(w.stop)
		tab := crc32.MakeTable(crc32.Castagnoli)

		type got struct {
			n, direct, read int64
			crc             uint32
			err             error
		}
		rcvd := make(chan got, 1)
		ln, err := rtc.Listen(w.b, 7102, 0, func(*rtc.Conn) rtc.Handler {
			var g got
			calls := 0
			h := &direct{}
			// Take nothing of every third segment and a varying share of
			// the others, so that the rest waits in TCP's receive buffer
			// for Read, and direct receive stops until it is drained.
			h.receive = func(_ *rtc.Conn, p []byte) int {
				calls++
				if calls%3 == 0 {
					return 0
				}
				k := min(len(p), 1+calls*37%1400)
				g.crc = crc32.Update(g.crc, tab, p[:k])
				g.direct += int64(k)
				return k
			}
			buf := make([]byte, 777)
			h.readable = func(c *rtc.Conn) {
				for {
					n, err := c.Read(buf)
					g.crc = crc32.Update(g.crc, tab, buf[:n])
					g.read += int64(n)
					switch {
					case errors.Is(err, io.EOF):
						g.n = g.direct + g.read
						rcvd <- g
						_ = c.Close()
						return
					case errors.Is(err, rtc.ErrWouldBlock):
						return
					case err != nil:
						g.err = err
						rcvd <- g
						return
					}
				}
			}
			h.closed = func(_ *rtc.Conn, err error) { g.err = orFail("closed", err); rcvd <- g }
			return h
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(ln.Close)

		rng := rand.New(rand.NewPCG(3, 4))
		src := make([]byte, 10007)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		var sent int64
		var crc uint32
		writables := 0
		sentAll := make(chan error, 1)
		pump := func(c *rtc.Conn) {
			for sent < total {
				off := int(sent % int64(len(src)))
				b := src[off:min(len(src), off+int(total-sent))]
				n, err := c.Write(b)
				crc = crc32.Update(crc, tab, b[:n])
				sent += int64(n)
				if err != nil && !errors.Is(err, rtc.ErrWouldBlock) {
					sentAll <- err
					return
				}
				if n < len(b) {
					return // Writable follows
				}
			}
			sentAll <- c.CloseWrite()
		}
		h := &funcs{}
		h.writable = func(c *rtc.Conn) { writables++; pump(c) }
		h.readable = func(c *rtc.Conn) {
			if _, err := c.Read(make([]byte, 1)); errors.Is(err, io.EOF) {
				_ = c.Close()
			}
		}
		var d dialed
		Eventually(w.dial(7102, h)).WithTimeout(within).Should(Receive(&d))
		Expect(d.err).NotTo(HaveOccurred())
		on(d.c, func() { pump(d.c) })
		var werr error
		Eventually(sentAll).WithTimeout(within).Should(Receive(&werr))
		Expect(werr).NotTo(HaveOccurred())
		var g got
		Eventually(rcvd).WithTimeout(within).Should(Receive(&g))
		Expect(g.err).NotTo(HaveOccurred())
		Expect(g.n).To(BeEquivalentTo(total))
		Expect(g.crc).To(Equal(crc), "CRC-32C of the bytes received against the bytes sent")
		// A burst's segments after one Receive left bytes behind join
		// them in the receive buffer, so most bytes are read.
		Expect(g.direct).To(BeNumerically(">", 0), "bytes taken straight from segments")
		Expect(g.read).To(BeNumerically(">", total/8), "bytes read from TCP's receive buffer")
		Expect(writables).To(BeNumerically(">", 100), "the sender waited for room")
	})

	It("half-closes: EOF on both sides, and the side left holding the connection hears its orderly end", func() {
		w := newWire()
		DeferCleanup(w.stop)
		type srvGot struct {
			req    string
			closed error
		}
		srv := make(chan srvGot, 1)
		ln, err := rtc.Listen(w.b, 7103, 0, func(*rtc.Conn) rtc.Handler {
			var g srvGot
			answered := false
			h := &funcs{}
			buf := make([]byte, 64)
			h.readable = func(c *rtc.Conn) {
				for {
					n, err := c.Read(buf)
					g.req += string(buf[:n])
					if errors.Is(err, io.EOF) {
						// Readable is level-like: EOF again at the end.
						if answered {
							return
						}
						answered = true
						// Answer, then half-close and keep the
						// connection: Closed must follow the client's
						// ACK of our FIN.
						if _, err := c.Write([]byte("bye")); err != nil {
							g.closed = err
						}
						if err := c.CloseWrite(); err != nil {
							g.closed = err
						}
						return
					}
					if err != nil {
						return
					}
				}
			}
			h.closed = func(_ *rtc.Conn, err error) {
				if g.closed == nil {
					g.closed = err
				}
				srv <- g
			}
			return h
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(ln.Close)

		type cliGot struct {
			reply      string
			eof        bool
			afterClose error
		}
		cli := make(chan cliGot, 1)
		var g cliGot
		h := &funcs{}
		buf := make([]byte, 64)
		h.readable = func(c *rtc.Conn) {
			for {
				n, err := c.Read(buf)
				g.reply += string(buf[:n])
				if errors.Is(err, io.EOF) {
					g.eof = true
					_ = c.Close()
					_, g.afterClose = c.Write([]byte("x"))
					cli <- g
					return
				}
				if err != nil {
					return
				}
			}
		}
		h.closed = func(*rtc.Conn, error) { cli <- cliGot{reply: "closed before EOF"} }
		var d dialed
		Eventually(w.dial(7103, h)).WithTimeout(within).Should(Receive(&d))
		Expect(d.err).NotTo(HaveOccurred())
		on(d.c, func() {
			_, _ = d.c.Write([]byte("hello"))
			_ = d.c.CloseWrite()
		})
		var cg cliGot
		Eventually(cli).WithTimeout(within).Should(Receive(&cg))
		Expect(cg).To(Equal(cliGot{reply: "bye", eof: true, afterClose: rtc.ErrClosed}))
		var sg srvGot
		Eventually(srv).WithTimeout(within).Should(Receive(&sg))
		Expect(sg.req).To(Equal("hello"))
		Expect(sg.closed).NotTo(HaveOccurred(), "an orderly end: Closed with nil")
	})

	It("reports a refused dial to the dial callback alone", func() {
		w := newWire()
		DeferCleanup(w.stop)
		calls := make(chan string, 4)
		h := &funcs{
			readable: func(*rtc.Conn) { calls <- "readable" },
			writable: func(*rtc.Conn) { calls <- "writable" },
			closed:   func(*rtc.Conn, error) { calls <- "closed" },
		}
		var d dialed
		Eventually(w.dial(7999, h)).WithTimeout(within).Should(Receive(&d))
		Expect(d.err).To(MatchError(tcp.ErrConnRefused))
		Consistently(calls).WithTimeout(100 * time.Millisecond).ShouldNot(Receive())
	})

	It("hears a reset as Closed with the engine's error, and a refusal by the accept function is counted", func() {
		w := newWire()
		DeferCleanup(w.stop)
		n := 0
		ln, err := rtc.Listen(w.b, 7104, 0, func(c *rtc.Conn) rtc.Handler {
			n++
			if n == 1 {
				_ = c.Abort()
			}
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(ln.Close)

		closed := make(chan error, 1)
		h := &funcs{closed: func(_ *rtc.Conn, err error) { closed <- err }}
		var d dialed
		Eventually(w.dial(7104, h)).WithTimeout(within).Should(Receive(&d))
		Expect(d.err).NotTo(HaveOccurred())
		var cerr error
		Eventually(closed).WithTimeout(within).Should(Receive(&cerr))
		Expect(cerr).To(MatchError(tcp.ErrConnReset))

		// The second connection is refused (closed with a FIN): EOF.
		eof := make(chan error, 1)
		h2 := &funcs{readable: func(c *rtc.Conn) {
			if _, err := c.Read(make([]byte, 8)); !errors.Is(err, rtc.ErrWouldBlock) {
				eof <- err
				_ = c.Close()
			}
		}}
		Eventually(w.dial(7104, h2)).WithTimeout(within).Should(Receive(&d))
		Expect(d.err).NotTo(HaveOccurred())
		Eventually(eof).WithTimeout(within).Should(Receive(MatchError(io.EOF)))
		Expect(ln.Stats()).To(Equal(rtc.ListenerStats{Accepted: 2, Refused: 1}))
	})

	It("refuses stack calls from inside Receive and still delivers the bytes", func() {
		w := newWire()
		DeferCleanup(w.stop)
		res := make(chan []error, 1)
		ln, err := rtc.Listen(w.b, 7105, 0, func(*rtc.Conn) rtc.Handler {
			h := &direct{}
			var errs []error
			var got []byte
			h.receive = func(c *rtc.Conn, p []byte) int {
				_, e1 := c.Write(p)
				_, e2 := c.Read(make([]byte, 1))
				errs = append(errs, e1, e2, c.Close())
				got = append(got, p...)
				return len(p)
			}
			h.readable = func(c *rtc.Conn) {
				if string(got) == "ping" {
					errs = append(errs, c.Close())
					res <- errs
				}
			}
			return h
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(ln.Close)
		var d dialed
		Eventually(w.dial(7105, &funcs{})).WithTimeout(within).Should(Receive(&d))
		Expect(d.err).NotTo(HaveOccurred())
		on(d.c, func() { _, _ = d.c.Write([]byte("ping")) })
		var errs []error
		Eventually(res).WithTimeout(within).Should(Receive(&errs))
		Expect(errs).To(Equal([]error{rtc.ErrInReceive, rtc.ErrInReceive, rtc.ErrInReceive, nil}))
	})
})
