package tcp

import (
	"errors"
	"io"
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Specs of the engine over IPv6: the state machine is the same, the
// network layer (here ipv6Network, RFC 8200) gives the header length and
// the pseudo-header, and the addresses are tcp.IP of the other family.

var _ = Describe("A connection over IPv6 (RFC 8200 section 8.1)", func() {
	var (
		w     *wire
		notV6 int
		mtu   int
	)
	addr := func(s string) IP {
		ip, ok := IPFromNetip(netip.MustParseAddr(s))
		Expect(ok).To(BeTrue())
		return ip
	}

	BeforeEach(func() {
		notV6 = 0
		cfg := DefaultConfig()
		mtu = cfg.MTU
		w = newWireOver(wireConfig{rateBps: 1e9, latency: 20 * time.Microsecond, seed: 3}, [2]Config{cfg, cfg},
			[2]IP{addr("fd00::1"), addr("fd00::2")},
			func(e wireEnd) Output { return wireEnd6{wireEnd: e, net: ipv6Network{notV6: &notV6}} })
	})

	// run steps the wire until cond holds or a virtual second passes.
	run := func(cond func() bool) {
		limit := w.now + time.Second
		for !cond() {
			Expect(w.step(limit)).To(BeTrue(), "the wire went idle before the condition held")
		}
	}

	// readAll reads what c has.
	readAll := func(c *Conn) ([]byte, error) {
		var got []byte
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				if errors.Is(err, ErrWouldBlock) {
					return got, nil
				}
				return got, err
			}
		}
	}

	It("runs handshake, data both ways and close between two engines with nothing else changed", func() {
		l, err := w.stacks[1].Listen(IPFrom16([16]byte{}), 80, 4)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Addr().String()).To(Equal("[::]:80"))
		cli, err := w.stacks[0].Connect(w.now, Addr{IP: w.addrs[0]}, Addr{IP: w.addrs[1], Port: 80})
		Expect(err).NotTo(HaveOccurred())
		var srv *Conn
		run(func() bool {
			if srv == nil {
				srv, _ = l.Accept()
			}
			return srv != nil && cli.Connected()
		})
		Expect(srv.State()).To(Equal(StateEstablished))
		Expect(cli.State()).To(Equal(StateEstablished))
		Expect(srv.RemoteAddr()).To(Equal(cli.LocalAddr()))
		Expect(srv.LocalAddr().String()).To(Equal("[fd00::2]:80"))
		Expect(cli.RemoteAddr().String()).To(Equal("[fd00::2]:80"))
		// The MSS is the MTU less IPv6's 40 bytes and TCP's 20, less the
		// timestamps option (RFC 6691).
		Expect(cli.Info().MSS).To(Equal(mtu - ipv6HeaderLen - HeaderLen - 12))

		request, reply := pattern(3000), pattern(70000)[1000:]
		Expect(cli.Write(request)).To(Equal(len(request)))
		var gotReq []byte
		run(func() bool {
			b, err := readAll(srv)
			Expect(err).NotTo(HaveOccurred())
			gotReq = append(gotReq, b...)
			return len(gotReq) >= len(request)
		})
		Expect(gotReq).To(Equal(request))
		var gotReply []byte
		pending := reply
		run(func() bool {
			if len(pending) > 0 {
				n, err := srv.Write(pending)
				if err != nil {
					Expect(err).To(MatchError(ErrWouldBlock))
				}
				pending = pending[n:]
			}
			b, err := readAll(cli)
			Expect(err).NotTo(HaveOccurred())
			gotReply = append(gotReply, b...)
			return len(gotReply) >= len(reply)
		})
		Expect(gotReply).To(Equal(reply))

		// Close: the client first (it ends in TIME-WAIT), then the server.
		Expect(cli.Close()).To(Succeed())
		run(func() bool {
			_, err := readAll(srv)
			return errors.Is(err, io.EOF)
		})
		Expect(srv.Close()).To(Succeed())
		run(func() bool { return srv.State() == StateClosed && cli.State() == StateTimeWait })

		for i, s := range w.stacks {
			st := s.Stats()
			Expect(st.InCsumErrors).To(BeZero(), "stack %d: every checksum verified over the IPv6 pseudo-header", i)
			Expect(st.InErrs).To(BeZero())
			Expect(st.Drops.NoSocket).To(BeZero())
			Expect(st.OutRsts).To(BeZero())
		}
		Expect(notV6).To(BeZero(), "no IPv4 address reached the network layer")
	})

	It("keeps an IPv4 wildcard listener to IPv4: an IPv6 SYN to its port is refused", func() {
		_, err := w.stacks[1].Listen(IP{}, 80, 4)
		Expect(err).NotTo(HaveOccurred())
		cli, err := w.stacks[0].Connect(w.now, Addr{IP: w.addrs[0]}, Addr{IP: w.addrs[1], Port: 80})
		Expect(err).NotTo(HaveOccurred())
		run(func() bool { return cli.Err() != nil })
		Expect(cli.Err()).To(MatchError(ErrConnRefused))
		Expect(w.stacks[1].Stats().Drops.NoSocket).To(BeEquivalentTo(1))
	})

	It("lets an IPv4 and an IPv6 wildcard listener share a port", func() {
		_, err := w.stacks[1].Listen(IP{}, 80, 4)
		Expect(err).NotTo(HaveOccurred())
		l6, err := w.stacks[1].Listen(IPFrom16([16]byte{}), 80, 4)
		Expect(err).NotTo(HaveOccurred())
		_, err = w.stacks[1].Listen(IPFrom16([16]byte{}), 80, 4)
		Expect(err).To(MatchError(ErrAddrInUse))
		cli, err := w.stacks[0].Connect(w.now, Addr{IP: w.addrs[0]}, Addr{IP: w.addrs[1], Port: 80})
		Expect(err).NotTo(HaveOccurred())
		run(func() bool { return cli.Connected() && l6.Pending() == 1 })
		socks := w.stacks[1].AppendSockets(nil)
		Expect(socks[0].Local.String()).To(Equal("0.0.0.0:80"), "IPv4 sorts first")
		Expect(socks[1].Local.String()).To(Equal("[::]:80"))
	})
})
