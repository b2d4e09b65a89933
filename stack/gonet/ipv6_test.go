package gonet_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/stack/gonet"
	"github.com/savanna-sim/savanna/stack/rt"
)

// newWire6 is newWire with both stacks dual-stack: A 10.9.0.1 and
// fd09::1, B 10.9.0.2 and fd09::2, DAD done.
func newWire6(lcoresA, lcoresB int) *wire {
	p, err := livetest.NewRingPairWith(livetest.RingPairConfig{LcoresA: lcoresA, LcoresB: lcoresB,
		A4: "10.9.0.1/24", A6: "fd09::1/64", B4: "10.9.0.2/24", B6: "fd09::2/64", FastDAD: true})
	Expect(err).NotTo(HaveOccurred())
	w := &wire{a: p.A, b: p.B, pa: p.PA, pb: p.PB}
	DeferCleanup(w.stop)
	for _, r := range []*rt.Runtime{w.a, w.b} {
		Eventually(func() bool { return livetest.Assigned6(r) }).WithTimeout(10*time.Second).WithPolling(10*time.Millisecond).
			Should(BeTrue(), "Duplicate Address Detection must pass on a link with no other node")
	}
	return w
}

// acceptOne accepts one connection from ln in the background.
func acceptOne(ln net.Listener) <-chan net.Conn {
	ch := make(chan net.Conn, 1)
	go func() {
		defer GinkgoRecover()
		c, err := ln.Accept()
		Expect(err).NotTo(HaveOccurred())
		ch <- c
	}()
	return ch
}

// dialCtx is a 10 s context.
func dialCtx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	DeferCleanup(cancel)
	return ctx
}

// tcpAddrOf returns a's address and port as a netip.AddrPort, failing
// unless a is a *net.TCPAddr of the family is4 says.
func tcpAddrOf(a net.Addr, is4 bool) netip.AddrPort {
	ta, ok := a.(*net.TCPAddr)
	ExpectWithOffset(1, ok).To(BeTrue(), "a *net.TCPAddr, not %T", a)
	ExpectWithOffset(1, ta.IP.To4() != nil).To(Equal(is4), "family of %v", ta)
	if is4 {
		ExpectWithOffset(1, ta.IP).To(HaveLen(net.IPv4len), "an IPv4 address in its 4-byte form, as net gives")
	}
	return ta.AddrPort()
}

var _ = Describe("gonet over IPv6 (tcp6) in real time", func() {
	It("echoes 4 MiB over tcp6 between two stacks, with *net.TCPAddr addresses of the IPv6 family", func() {
		w := newWire6(1, 1)
		ln, err := gonet.ListenConfig{}.Listen(w.b, "tcp6", ":7")
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		Expect(tcpAddrOf(ln.Addr(), false)).To(Equal(netip.MustParseAddrPort("[::]:7")))
		acc := acceptOne(ln)
		go func() {
			defer GinkgoRecover()
			var s net.Conn
			Eventually(acc).WithTimeout(10 * time.Second).Should(Receive(&s))
			_, _ = io.Copy(s, s)
			_ = s.Close()
		}()
		c, err := (&gonet.Dialer{R: w.a}).DialContext(dialCtx(), "tcp6", "[fd09::2]:7")
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		Expect(tcpAddrOf(c.RemoteAddr(), false)).To(Equal(netip.MustParseAddrPort("[fd09::2]:7")))
		Expect(tcpAddrOf(c.LocalAddr(), false).Addr()).To(Equal(netip.MustParseAddr("fd09::1")))

		const total = 4 << 20
		sent, got := sha256.New(), sha256.New()
		werr := make(chan error, 1)
		go func() {
			r := rand.New(rand.NewPCG(6, 6))
			buf := make([]byte, 32<<10)
			for n := 0; n < total; n += len(buf) {
				for i := range buf {
					buf[i] = byte(r.Uint32())
				}
				sent.Write(buf)
				if _, err := c.Write(buf); err != nil {
					werr <- err
					return
				}
			}
			werr <- c.(*gonet.Conn).CloseWrite()
		}()
		_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
		n, err := io.Copy(got, c)
		Expect(err).NotTo(HaveOccurred())
		Expect(<-werr).To(Succeed())
		Expect(n).To(BeEquivalentTo(total))
		Expect(got.Sum(nil)).To(Equal(sent.Sum(nil)))

		// The connection is an IPv6 one on both stacks' books.
		s6 := w.a.Snapshot().Lcores[0].Iface6
		Expect(s6.Out.Requests).To(BeNumerically(">", total/1500))
		Expect(s6.IPv6.InDelivers).To(BeNumerically(">", total/1500))
	})

	DescribeTable("Listen is dual-stack as net.Listen(\"tcp\", \":port\") is: both families accepted, peers in their own family",
		func(lcores int) {
			w := newWire6(lcores, lcores)
			ln, err := gonet.Listen(w.b, 8)
			Expect(err).NotTo(HaveOccurred())
			defer ln.Close()
			Expect(tcpAddrOf(ln.Addr(), false)).To(Equal(netip.MustParseAddrPort("[::]:8")))
			for _, tc := range []struct {
				target, peer string
				is4          bool
			}{{"10.9.0.2:8", "10.9.0.1", true}, {"[fd09::2]:8", "fd09::1", false}, {"10.9.0.2:8", "10.9.0.1", true}, {"[fd09::2]:8", "fd09::1", false}} {
				acc := acceptOne(ln)
				c, err := gonet.Dial(dialCtx(), w.a, tc.target)
				Expect(err).NotTo(HaveOccurred(), tc.target)
				var s net.Conn
				Eventually(acc).WithTimeout(10 * time.Second).Should(Receive(&s))
				Expect(tcpAddrOf(s.RemoteAddr(), tc.is4).Addr()).To(Equal(netip.MustParseAddr(tc.peer)), tc.target)
				Expect(tcpAddrOf(s.LocalAddr(), tc.is4).String()).To(Equal(tc.target))
				_, err = c.Write([]byte("ping " + tc.target))
				Expect(err).NotTo(HaveOccurred())
				buf := make([]byte, 64)
				_ = s.SetReadDeadline(time.Now().Add(10 * time.Second))
				k, err := s.Read(buf)
				Expect(err).NotTo(HaveOccurred())
				Expect(string(buf[:k])).To(Equal("ping " + tc.target))
				Expect(c.Close()).To(Succeed())
				Expect(s.Close()).To(Succeed())
			}
		},
		Entry("1 lcore a side", 1),
		Entry("2 lcores a side (IPv6 frames on queue 0: the ring port hashes IPv4 only)", 2),
	)

	It("honours tcp4 and tcp6: a V6ONLY listener refuses IPv4, an IPv4 listener refuses IPv6 (RST, ECONNREFUSED)", func() {
		w := newWire6(1, 1)
		l6, err := gonet.ListenConfig{}.Listen(w.b, "tcp6", ":9")
		Expect(err).NotTo(HaveOccurred())
		defer l6.Close()
		l4, err := gonet.ListenConfig{}.Listen(w.b, "tcp4", ":10")
		Expect(err).NotTo(HaveOccurred())
		defer l4.Close()
		Expect(tcpAddrOf(l4.Addr(), true)).To(Equal(netip.MustParseAddrPort("0.0.0.0:10")))
		for _, target := range []string{"10.9.0.2:9", "[fd09::2]:10"} {
			_, err := gonet.Dial(dialCtx(), w.a, target)
			Expect(errors.Is(err, syscall.ECONNREFUSED)).To(BeTrue(), "%s: %v", target, err)
		}
		for _, target := range []string{"[fd09::2]:9", "10.9.0.2:10"} {
			acc := acceptOne(map[string]net.Listener{"[fd09::2]:9": l6, "10.9.0.2:10": l4}[target])
			c, err := gonet.Dial(dialCtx(), w.a, target)
			Expect(err).NotTo(HaveOccurred(), target)
			Eventually(acc).WithTimeout(10 * time.Second).Should(Receive())
			_ = c.Close()
		}
	})

	It("dials a link-local address (zone accepted) from the stack's link-local address", func() {
		w := newWire6(1, 1)
		ln, err := gonet.Listen(w.b, 11)
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		llA, llB := netip.AddrFrom16(w.a.LinkLocal6()), netip.AddrFrom16(w.b.LinkLocal6())
		Expect(llB.IsLinkLocalUnicast()).To(BeTrue())
		acc := acceptOne(ln)
		c, err := gonet.Dial(dialCtx(), w.a, fmt.Sprintf("[%s%%sv0]:11", llB))
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		Expect(tcpAddrOf(c.LocalAddr(), false).Addr()).To(Equal(llA))
		var s net.Conn
		Eventually(acc).WithTimeout(10 * time.Second).Should(Receive(&s))
		Expect(tcpAddrOf(s.RemoteAddr(), false).Addr()).To(Equal(llA))
		_ = s.Close()
	})

	It("refuses a wrong family, a family the stack lacks and an address not its own, as the net package and Linux do", func() {
		w := newWire6(1, 1)
		v4, err := livetest.NewRingPair(1, 1)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(v4.Stop)
		addrErr := func(err error, want string) {
			var ae *net.AddrError
			ExpectWithOffset(1, errors.As(err, &ae)).To(BeTrue(), "%v", err)
			ExpectWithOffset(1, ae.Err).To(ContainSubstring(want))
		}
		d := &gonet.Dialer{R: w.a}
		_, err = d.DialContext(dialCtx(), "tcp4", "[fd09::2]:7")
		addrErr(err, "no suitable address")
		_, err = d.DialContext(dialCtx(), "tcp6", "10.9.0.2:7")
		addrErr(err, "no suitable address")
		_, err = gonet.ListenConfig{}.Listen(w.b, "tcp4", "[fd09::2]:7")
		addrErr(err, "no suitable address")
		_, err = gonet.ListenConfig{}.Listen(w.b, "tcp6", "10.9.0.2:7")
		addrErr(err, "no suitable address")
		_, err = gonet.ListenConfig{}.Listen(w.b, "tcp", "example.com:7")
		addrErr(err, "no resolver")

		_, err = gonet.ListenConfig{}.Listen(v4.B, "tcp6", ":7")
		Expect(errors.Is(err, syscall.EAFNOSUPPORT)).To(BeTrue(), "%v", err)
		_, err = gonet.Dial(dialCtx(), v4.A, "[fd09::2]:7")
		Expect(errors.Is(err, syscall.ENETUNREACH)).To(BeTrue(), "%v", err)
		_, err = gonet.ListenConfig{}.Listen(w.b, "tcp6", "[fd09::99]:7")
		Expect(errors.Is(err, syscall.EADDRNOTAVAIL)).To(BeTrue(), "%v", err)
		_, err = gonet.ListenConfig{}.Listen(w.b, "udp", ":7")
		var une net.UnknownNetworkError
		Expect(errors.As(err, &une)).To(BeTrue(), "%v", err)
		_, err = d.DialContext(dialCtx(), "tcp7", "[fd09::2]:7")
		Expect(errors.As(err, &une)).To(BeTrue(), "%v", err)

		// An IPv4-only stack keeps its old Listen: 0.0.0.0, reported as
		// its address.
		ln, err := gonet.Listen(v4.B, 12)
		Expect(err).NotTo(HaveOccurred())
		Expect(ln.Addr().String()).To(Equal("10.9.0.2:12"))
		_ = ln.Close()
	})
})
