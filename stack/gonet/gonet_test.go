package gonet_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/gonet"
)

// pipe dials from A to a fresh listener on B and returns both ends.
func pipe(w *wire, port uint16) (client, server *gonet.Conn, ln *gonet.Listener) {
	ln, err := gonet.Listen(w.b, port)
	Expect(err).NotTo(HaveOccurred())
	ch := make(chan net.Conn, 1)
	go func() {
		defer GinkgoRecover()
		c, err := ln.Accept()
		Expect(err).NotTo(HaveOccurred())
		ch <- c
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err = gonet.Dial(ctx, w.a, fmt.Sprintf("10.9.0.2:%d", port))
	Expect(err).NotTo(HaveOccurred())
	var s net.Conn
	Eventually(ch).WithTimeout(10 * time.Second).Should(Receive(&s))
	return client, s.(*gonet.Conn), ln
}

var _ = Describe("gonet over ring ports in real time", func() {
	var w *wire
	BeforeEach(func() {
		var err error
		w, err = newWire(1, 1)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.stop)
	})

	It("serves net/http from one stack to a net/http client on the other", func() {
		ln, err := gonet.Listen(w.b, 80)
		Expect(err).NotTo(HaveOccurred())
		body := bytes.Repeat([]byte("savanna "), 64<<10)
		mux := http.NewServeMux()
		mux.HandleFunc("/hello", func(rw http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(rw, "hello %s from %s", r.RemoteAddr, r.Host)
		})
		mux.HandleFunc("/big", func(rw http.ResponseWriter, r *http.Request) { _, _ = rw.Write(body) })
		mux.HandleFunc("/echo", func(rw http.ResponseWriter, r *http.Request) { _, _ = io.Copy(rw, r.Body) })
		srv := &http.Server{Handler: mux}
		go func() { _ = srv.Serve(ln) }()
		DeferCleanup(func() { _ = srv.Close() })

		client := &http.Client{Timeout: 20 * time.Second,
			Transport: &http.Transport{DialContext: (&gonet.Dialer{R: w.a}).DialContext, MaxIdleConnsPerHost: 4}}
		resp, err := client.Get("http://10.9.0.2/hello")
		Expect(err).NotTo(HaveOccurred())
		b, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(200))
		Expect(string(b)).To(HavePrefix("hello 10.9.0.1:"))

		for i := 0; i < 5; i++ {
			resp, err = client.Get("http://10.9.0.2/big")
			Expect(err).NotTo(HaveOccurred())
			b, err = io.ReadAll(resp.Body)
			Expect(err).NotTo(HaveOccurred())
			resp.Body.Close()
			Expect(b).To(Equal(body))
		}
		up := make([]byte, 1<<20)
		fill(up, 1)
		resp, err = client.Post("http://10.9.0.2/echo", "application/octet-stream", bytes.NewReader(up))
		Expect(err).NotTo(HaveOccurred())
		b, err = io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(sha256.Sum256(b)).To(Equal(sha256.Sum256(up)))
	})

	It("carries small messages, then large writes, then small ones again, intact (rings grow on demand)", func() {
		c, s, ln := pipe(w, 9301)
		defer ln.Close()
		defer c.Close()
		defer s.Close()
		rng := rand.New(rand.NewPCG(7, 8))
		sizes := []int{1, 64, 100, 3000, 70_000, 1 << 20, 64, 1, 200_000, 5}
		var sent bytes.Buffer
		go func() {
			defer GinkgoRecover()
			for _, n := range sizes {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(rng.IntN(256))
				}
				sent.Write(b)
				_, err := c.Write(b)
				Expect(err).NotTo(HaveOccurred())
			}
			Expect(c.CloseWrite()).To(Succeed())
		}()
		got, err := io.ReadAll(s)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(sent.Len()))
		Expect(sha256.Sum256(got)).To(Equal(sha256.Sum256(sent.Bytes())))
	})

	It("half-closes with CloseWrite: the peer reads io.EOF and can still answer", func() {
		c, s, ln := pipe(w, 7001)
		defer ln.Close()
		_, err := c.Write([]byte("request"))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.CloseWrite()).To(Succeed())
		got, err := io.ReadAll(s)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(got)).To(Equal("request"))
		_, err = s.Write([]byte("answer"))
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Close()).To(Succeed())
		got, err = io.ReadAll(c)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(got)).To(Equal("answer"))
		_, err = c.Write([]byte("late"))
		Expect(errors.Is(err, syscall.EPIPE)).To(BeTrue(), "%v", err)
		Expect(c.Close()).To(Succeed())
	})

	It("times out reads and writes with net.Error Timeout and os.ErrDeadlineExceeded", func() {
		c, s, ln := pipe(w, 7002)
		defer ln.Close()
		defer s.Close()
		defer c.Close()
		Expect(c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))).To(Succeed())
		_, err := c.Read(make([]byte, 10))
		var ne net.Error
		Expect(errors.As(err, &ne)).To(BeTrue())
		Expect(ne.Timeout()).To(BeTrue())
		Expect(errors.Is(err, os.ErrDeadlineExceeded)).To(BeTrue())
		var oe *net.OpError
		Expect(errors.As(err, &oe)).To(BeTrue())
		Expect(oe.Op).To(Equal("read"))
		Expect(oe.Net).To(Equal("tcp"))
		Expect(oe.Source).To(BeAssignableToTypeOf(&net.TCPAddr{}))

		// The peer does not read: the write side fills and times out.
		Expect(c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))).To(Succeed())
		chunk := make([]byte, 64<<10)
		var werr error
		for i := 0; i < 1000 && werr == nil; i++ {
			_, werr = c.Write(chunk)
		}
		Expect(errors.Is(werr, os.ErrDeadlineExceeded)).To(BeTrue(), "%v", werr)
		// Clearing the deadline makes the conn usable again.
		Expect(c.SetDeadline(time.Time{})).To(Succeed())
		_, err = s.Read(make([]byte, 100))
		Expect(err).NotTo(HaveOccurred())
	})

	It("unblocks pending Read, Write and Accept with net.ErrClosed on Close", func() {
		c, s, ln := pipe(w, 7003)
		defer s.Close()
		errs := make(chan error, 3)
		go func() { _, err := c.Read(make([]byte, 1)); errs <- err }()
		go func() { _, err := ln.Accept(); errs <- err }()
		time.Sleep(20 * time.Millisecond)
		Expect(c.Close()).To(Succeed())
		Expect(ln.Close()).To(Succeed())
		for i := 0; i < 2; i++ {
			var err error
			Eventually(errs).WithTimeout(5 * time.Second).Should(Receive(&err))
			Expect(errors.Is(err, net.ErrClosed)).To(BeTrue(), "%v", err)
		}
		Expect(errors.Is(c.Close(), net.ErrClosed)).To(BeTrue())
	})

	It("dials an address with DialTCP and reports both ends' addresses", func() {
		ln, err := gonet.Listen(w.b, 7010)
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := gonet.DialTCP(ctx, w.a, &net.TCPAddr{IP: net.IPv4(10, 9, 0, 2), Port: 7010})
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		s, err := ln.Accept()
		Expect(err).NotTo(HaveOccurred())
		defer s.Close()
		Expect(c.RemoteAddr().String()).To(Equal("10.9.0.2:7010"))
		Expect(s.LocalAddr().String()).To(Equal("10.9.0.2:7010"))
		Expect(s.RemoteAddr().String()).To(Equal(c.LocalAddr().String()))
		Expect(c.LocalAddr()).To(BeAssignableToTypeOf(&net.TCPAddr{}))

		for _, bad := range []*net.TCPAddr{{IP: net.ParseIP("::1"), Port: 7010}, {IP: net.IPv4(10, 9, 0, 2)}, nil} {
			_, err = gonet.DialTCP(ctx, w.a, bad)
			var oe *net.OpError
			Expect(errors.As(err, &oe)).To(BeTrue(), "%v", err)
			Expect(oe.Op).To(Equal("dial"))
		}
	})

	It("wakes a blocked Read when a deadline set meanwhile expires, and a cleared one never fires", func() {
		c, s, ln := pipe(w, 7011)
		defer ln.Close()
		defer s.Close()
		defer c.Close()
		errs := make(chan error, 1)
		go func() { _, err := c.Read(make([]byte, 1)); errs <- err }()
		Consistently(errs).WithTimeout(30 * time.Millisecond).ShouldNot(Receive())
		// Armed, then disarmed before it fires: the stale timer is ignored.
		Expect(c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))).To(Succeed())
		Expect(c.SetReadDeadline(time.Time{})).To(Succeed())
		Consistently(errs).WithTimeout(60 * time.Millisecond).ShouldNot(Receive())
		Expect(c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))).To(Succeed())
		var err error
		Eventually(errs).WithTimeout(5 * time.Second).Should(Receive(&err))
		Expect(errors.Is(err, os.ErrDeadlineExceeded)).To(BeTrue(), "%v", err)
	})

	It("reports a refused dial like the net package (ECONNREFUSED in a dial OpError)", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := gonet.Dial(ctx, w.a, "10.9.0.2:9")
		Expect(errors.Is(err, syscall.ECONNREFUSED)).To(BeTrue(), "%v", err)
		var oe *net.OpError
		Expect(errors.As(err, &oe)).To(BeTrue())
		Expect(oe.Op).To(Equal("dial"))
	})

	It("sees a reset as ECONNRESET when the peer closes with unread data", func() {
		c, s, ln := pipe(w, 7004)
		defer ln.Close()
		_, err := c.Write([]byte("never read"))
		Expect(err).NotTo(HaveOccurred())
		// The bytes must have reached B's engine (its receive buffer or the
		// server conn's ring) before the close, or there is nothing unread
		// to turn the close into a RST.
		Eventually(func() uint64 {
			var n uint64
			for _, lc := range w.b.Snapshot().Lcores {
				n += lc.TCP.InDataBytes
			}
			return n
		}).WithTimeout(5 * time.Second).Should(BeNumerically(">=", len("never read")))
		Expect(s.Close()).To(Succeed())
		_, err = c.Read(make([]byte, 10))
		Expect(errors.Is(err, syscall.ECONNRESET)).To(BeTrue(), "%v", err)
		c.Close()
	})
})

var _ = DescribeTable("many concurrent connections echo their bytes",
	func(lcores, conns, size int) {
		w, err := newWire(lcores, lcores)
		Expect(err).NotTo(HaveOccurred())
		defer w.stop()
		ln, err := gonet.Listen(w.b, 7000)
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		var srvMu sync.Mutex
		var srv []*gonet.Conn
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				srvMu.Lock()
				srv = append(srv, c.(*gonet.Conn))
				srvMu.Unlock()
				go func() { _, _ = io.Copy(c, c); c.Close() }()
			}
		}()
		var wg sync.WaitGroup
		fails := make(chan error, conns)
		used := make([]int, lcores)
		var mu sync.Mutex
		for i := 0; i < conns; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				c, err := gonet.Dial(ctx, w.a, "10.9.0.2:7000")
				if err != nil {
					fails <- err
					return
				}
				mu.Lock()
				used[c.Lcore()]++
				mu.Unlock()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				msg := make([]byte, size)
				fill(msg, uint64(i))
				go func() { _, _ = c.Write(msg); _ = c.CloseWrite() }()
				got, err := io.ReadAll(c)
				if err != nil {
					ci, _ := c.Info()
					GinkgoWriter.Printf("client %v: got %d: %+v\n", c.LocalAddr(), len(got), ci)
					srvMu.Lock()
					for _, s := range srv {
						if s.RemoteAddr().String() == c.LocalAddr().String() {
							si, _ := s.Info()
							GinkgoWriter.Printf("server: %+v\n", si)
						}
					}
					srvMu.Unlock()
					fails <- err
					return
				}
				if !bytes.Equal(got, msg) {
					fails <- fmt.Errorf("conn %d: got %d bytes, want %d", i, len(got), len(msg))
				}
			}(i)
		}
		wg.Wait()
		close(fails)
		var errs []error
		for err := range fails {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			sa, sb := w.a.Snapshot(), w.b.Snapshot()
			GinkgoWriter.Printf("%d failures; A: %+v\nB: %+v\n", len(errs), sa, sb)
		}
		Expect(errs).To(BeEmpty())
		for q, n := range used {
			Expect(n).To(BeNumerically(">", 0), "lcore %d dialed nothing", q)
		}
		GinkgoWriter.Printf("dials per lcore: %v; port a %+v\n", used, w.pa.Stats().IMissed)
	},
	Entry("1 lcore, 200 conns of 16 KiB", 1, 200, 16<<10),
	Entry("2 lcores, 200 conns of 16 KiB", 2, 200, 16<<10),
)

// fill writes seeded pseudo-random bytes into b.
func fill(b []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}
