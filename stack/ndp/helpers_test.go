package ndp_test

import (
	"math/rand/v2"
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

var (
	macUs     = ether.Addr{0x02, 0, 0, 0, 0, 0x01}
	macPeer   = ether.Addr{0x02, 0, 0, 0, 0, 0x02}
	macNew    = ether.Addr{0x02, 0, 0, 0, 0, 0x03}
	macRouter = ether.Addr{0x02, 0, 0, 0, 0, 0xfe}
	llUs      = ipv6.LinkLocalFromMAC(macUs)
	llPeer    = ipv6.LinkLocalFromMAC(macPeer)
	llRouter  = ipv6.LinkLocalFromMAC(macRouter)
	llRouter2 = ipv6.LinkLocalFromMAC(ether.Addr{0x02, 0, 0, 0, 0, 0xfd})
	gPrefix   = mustAddr("fd00::")
	gPeer     = mustAddr("fd00::2")
	gUs       = mustAddr("fd00::1")
	farAway   = mustAddr("2001:db8::1")
)

func mustAddr(s string) ipv6.Addr {
	a, err := ipv6.ParseAddr(s)
	if err != nil {
		panic(err)
	}
	return a
}

// sent is one message the node handed to the sink, its bytes copied.
type sent struct {
	out ndp.Output
	at  time.Duration
}

func (s sent) typ() icmpv6.Type { return icmpv6.Header(s.out.Msg).Type() }

// recorder is a Sink that records everything.
type recorder struct {
	msgs        []sent
	pending     []*hw.Mbuf
	macs        []ether.Addr
	dropped     []*hw.Mbuf
	unreachable []*hw.Mbuf
	events      []ndp.Event
}

func (r *recorder) SendICMPv6(now time.Duration, out ndp.Output) {
	out.Msg = append([]byte(nil), out.Msg...)
	// Every message the node sends verifies.
	Expect(icmpv6.VerifyChecksum(out.Src, out.Dst, out.Msg)).To(BeTrue(), "checksum")
	r.msgs = append(r.msgs, sent{out, now})
}
func (r *recorder) SendPending(now time.Duration, m *hw.Mbuf, mac ether.Addr) {
	r.pending = append(r.pending, m)
	r.macs = append(r.macs, mac)
}
func (r *recorder) DropPending(m *hw.Mbuf) { r.dropped = append(r.dropped, m) }
func (r *recorder) AddressUnreachable(now time.Duration, m *hw.Mbuf) {
	r.unreachable = append(r.unreachable, m)
}
func (r *recorder) Notify(now time.Duration, ev ndp.Event) { r.events = append(r.events, ev) }

// of returns the messages of type t.
func (r *recorder) of(t icmpv6.Type) []sent {
	var s []sent
	for _, m := range r.msgs {
		if m.typ() == t {
			s = append(s, m)
		}
	}
	return s
}

func (r *recorder) eventsOf(k ndp.EventKind) []ndp.Event {
	var s []ndp.Event
	for _, e := range r.events {
		if e.Kind == k {
			s = append(s, e)
		}
	}
	return s
}

func (r *recorder) reset() { *r = recorder{} }

// quiet is DefaultConfig without the random start delays, so that specs
// know when things happen.
func quiet() ndp.Config {
	c := ndp.DefaultConfig()
	c.MaxRtrSolicitationDelay = 0
	return c
}

func newNode(cfg ndp.Config, seed uint64) *ndp.Node {
	n, err := ndp.NewNode(cfg, macUs, rand.NewPCG(seed, 7))
	Expect(err).NotTo(HaveOccurred())
	return n
}

// run polls n from from to to, following the deadlines it returns, and
// returns the last time it polled. A deadline at the present is polled
// once more; a node that still asks for the present spins, and fails.
func run(n *ndp.Node, sink ndp.Sink, from, to time.Duration) time.Duration {
	t := from
	for range 100000 {
		next := n.Poll(t, sink)
		if next <= t {
			next = n.Poll(t, sink)
			Expect(next).To(BeNumerically(">", t), "Poll keeps asking for the present")
		}
		if next > to {
			return t
		}
		t = next
	}
	panic("run: no progress")
}

// upNode is a started node whose link-local address is assigned, with
// no Router Solicitations, its recorder reset.
func upNode(cfg ndp.Config) (*ndp.Node, *recorder) {
	cfg.MaxRtrSolicitations = 0
	n := newNode(cfg, 1)
	rec := &recorder{}
	Expect(n.Start(0, rec)).To(Succeed())
	run(n, rec, 0, 2*time.Second)
	Expect(n.IsAssigned(llUs)).To(BeTrue())
	rec.reset()
	return n, rec
}

func nd(src, dst ipv6.Addr) ndp.IPInfo {
	return ndp.IPInfo{Src: src, Dst: dst, HopLimit: ndp.HopLimit}
}

func emitNA(na ndp.NeighborAdvert, src, dst ipv6.Addr) []byte {
	b := make([]byte, na.Len())
	na.Emit(b, src, dst)
	return b
}

func emitNS(ns ndp.NeighborSolicit, src, dst ipv6.Addr) []byte {
	b := make([]byte, ns.Len())
	ns.Emit(b, src, dst)
	return b
}

func emitRA(ra ndp.RouterAdvert, src, dst ipv6.Addr) []byte {
	b := make([]byte, ra.Len())
	ra.Emit(b, src, dst)
	return b
}

func emitQuery(q ndp.Query, src, dst ipv6.Addr) []byte {
	b := make([]byte, q.Len())
	q.Emit(b, src, dst)
	return b
}

func slla(mac ether.Addr) ndp.Options {
	return ndp.Options{SourceLinkAddr: mac, HasSourceLinkAddr: true}
}

func tlla(mac ether.Addr) ndp.Options {
	return ndp.Options{TargetLinkAddr: mac, HasTargetLinkAddr: true}
}

// advertise delivers a Neighbor Advertisement for target from its owner.
func advertise(n *ndp.Node, rec *recorder, now time.Duration, na ndp.NeighborAdvert) {
	n.Input(now, nd(na.Target, llUs), emitNA(na, na.Target, llUs), rec)
}

// ra delivers a Router Advertisement from llRouter to all-nodes.
func ra(n *ndp.Node, rec *recorder, now time.Duration, r ndp.RouterAdvert) {
	n.Input(now, nd(llRouter, ipv6.AllNodes()), emitRA(r, llRouter, ipv6.AllNodes()), rec)
}

// fill writes b's ICMPv6 checksum for ip's addresses.
func fill(b []byte, ip ndp.IPInfo) { icmpv6.FillChecksum(ip.Src, ip.Dst, b) }
