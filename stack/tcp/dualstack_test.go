package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Specs of dual-stack listeners over an IPv4 wire: an IPv6 listener
// that is not V6ONLY takes IPv4 connections (RFC 3493 section 5.3,
// Linux's net.ipv6.bindv6only = 0).
var _ = Describe("A dual-stack listener (RFC 3493 section 5.3, IPV6_V6ONLY)", func() {
	var w *wire
	BeforeEach(func() {
		cfg := DefaultConfig()
		w = newWire(wireConfig{rateBps: 1e9, latency: 20 * time.Microsecond, seed: 5}, [2]Config{cfg, cfg})
	})
	run := func(cond func() bool) {
		limit := w.now + time.Second
		for !cond() {
			Expect(w.step(limit)).To(BeTrue(), "the wire went idle before the condition held")
		}
	}
	connect := func() *Conn {
		cli, err := w.stacks[0].Connect(w.now, Addr{IP: w.addrs[0]}, Addr{IP: w.addrs[1], Port: 80})
		Expect(err).NotTo(HaveOccurred())
		return cli
	}

	It("on the IPv6 wildcard accepts an IPv4 connection by default, reporting the peer as IPv4", func() {
		l, err := w.stacks[1].Listen(IPFrom16([16]byte{}), 80, 4)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.V6Only()).To(BeFalse(), "Linux's default, bindv6only = 0")
		cli := connect()
		var srv *Conn
		run(func() bool {
			if srv == nil {
				srv, _ = l.Accept()
			}
			return srv != nil && cli.Connected()
		})
		Expect(srv.RemoteAddr()).To(Equal(cli.LocalAddr()))
		Expect(srv.RemoteAddr().IP.Is4()).To(BeTrue(), "IPv4, not ::ffff:a.b.c.d")
		Expect(srv.LocalAddr()).To(Equal(Addr{IP: w.addrs[1], Port: 80}))
		Expect(cli.Write([]byte("ping"))).To(Equal(4))
		buf := make([]byte, 8)
		run(func() bool { n, _ := srv.Read(buf); return n == 4 })
		Expect(w.stacks[1].Stats().Drops.NoSocket).To(BeZero())
	})

	It("refuses an IPv4 connection once V6ONLY is set", func() {
		l, err := w.stacks[1].Listen(IPFrom16([16]byte{}), 80, 4)
		Expect(err).NotTo(HaveOccurred())
		l.SetV6Only(true)
		cli := connect()
		run(func() bool { return cli.Err() != nil })
		Expect(cli.Err()).To(MatchError(ErrConnRefused))
		Expect(w.stacks[1].Stats().Drops.NoSocket).To(BeEquivalentTo(1))
		Expect(l.Pending()).To(BeZero())
	})

	It("on an IPv4-mapped address accepts IPv4 connections to that address", func() {
		l, err := w.stacks[1].Listen(IPFrom16(w.addrs[1].As16()), 80, 4)
		Expect(err).NotTo(HaveOccurred())
		cli := connect()
		run(func() bool { return cli.Connected() && l.Pending() == 1 })
	})

	It("yields to an IPv4 listener on the same port, which is the more specific", func() {
		l4, err := w.stacks[1].Listen(IP{}, 80, 4)
		Expect(err).NotTo(HaveOccurred())
		l6, err := w.stacks[1].Listen(IPFrom16([16]byte{}), 80, 4)
		Expect(err).NotTo(HaveOccurred())
		cli := connect()
		run(func() bool { return cli.Connected() && l4.Pending() == 1 })
		Expect(l6.Pending()).To(BeZero())
	})
})
