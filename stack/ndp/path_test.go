package ndp_test

import (
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

// twin drives two identical nodes with the same events, one through the
// maps (NextHop, Resolve, Confirm), the other through a Path, and
// checks after each step that they answer and count the same.
type twin struct {
	plain, cached *ndp.Node
	recP, recC    *recorder
	path          ndp.Path
	now           time.Duration
}

func newTwin() *twin {
	t := &twin{}
	t.plain, t.recP = upNode(quiet())
	t.cached, t.recC = upNode(quiet())
	t.now = 2 * time.Second
	return t
}

// output sends a packet to dst both ways and returns the cached node's
// answer.
func (t *twin) output(dst ipv6.Addr) (ether.Addr, bool) {
	hopP, okP := t.plain.NextHop(t.now, dst)
	if hopK, okK := t.cached.CachedNextHop(&t.path, dst); okK {
		// What stack/iface's route6 answers from before any check.
		Expect(okP).To(BeTrue(), "a cached next hop where the maps find none")
		Expect(hopK).To(Equal(hopP), "cached next hop")
	}
	hopC, okC := t.cached.NextHopPath(t.now, &t.path, dst)
	Expect(okC).To(Equal(okP), "next hop found")
	if !okP {
		return ether.Addr{}, false
	}
	Expect(hopC).To(Equal(hopP), "next hop")
	macP, rP := t.plain.Resolve(t.now, hopP, &hw.Mbuf{PktLen: 100}, t.recP)
	macC, rC := t.cached.ResolvePath(t.now, &t.path, hopC, &hw.Mbuf{PktLen: 100}, t.recC)
	Expect(rC).To(Equal(rP), "resolved")
	Expect(macC).To(Equal(macP), "link-layer address")
	return macC, rC
}

func (t *twin) confirm(a ipv6.Addr) {
	t.plain.Confirm(t.now, a)
	t.cached.ConfirmPath(t.now, &t.path, a)
}

// input gives both nodes the same ND message.
func (t *twin) input(ip ndp.IPInfo, msg []byte) {
	t.plain.Input(t.now, ip, append([]byte(nil), msg...), t.recP)
	t.cached.Input(t.now, ip, append([]byte(nil), msg...), t.recC)
}

func (t *twin) poll() {
	Expect(t.cached.Poll(t.now, t.recC)).To(Equal(t.plain.Poll(t.now, t.recP)), "next deadline")
}

// same checks that both nodes are in the same state.
func (t *twin) same(step int) {
	Expect(t.cached.Stats()).To(Equal(t.plain.Stats()), "counters at step %d", step)
	for _, a := range []ipv6.Addr{llPeer, gPeer, llRouter, farAway} {
		eP, okP := t.plain.Neighbor(a)
		eC, okC := t.cached.Neighbor(a)
		Expect(okC).To(Equal(okP), "entry for %v at step %d", a, step)
		Expect(eC).To(Equal(eP), "entry for %v at step %d", a, step)
	}
	Expect(t.cached.Destinations()).To(Equal(t.plain.Destinations()))
	Expect(t.cached.Routers(nil)).To(Equal(t.plain.Routers(nil)))
	Expect(len(t.recC.msgs)).To(Equal(len(t.recP.msgs)), "messages sent at step %d", step)
	Expect(t.recC.macs).To(Equal(t.recP.macs), "queued packets' link-layer addresses at step %d", step)
	Expect(len(t.recC.dropped)).To(Equal(len(t.recP.dropped)))
	Expect(len(t.recC.unreachable)).To(Equal(len(t.recP.unreachable)))
}

var _ = Describe("Path: the cached next hop and neighbour (Linux's dst_entry, net/ipv6/route.c)", func() {
	It("answers, moves every entry and counts exactly as NextHop, Resolve and Confirm do, over random ND events", func() {
		t := newTwin()
		rnd := rand.New(rand.NewPCG(21, 6))
		dsts := []ipv6.Addr{llPeer, llPeer, llPeer, gPeer, gPeer, farAway, llRouter}
		macs := []ether.Addr{macPeer, macNew}
		targets := []ipv6.Addr{llPeer, gPeer, llRouter}
		for step := range 4000 {
			switch k := rnd.IntN(100); {
			case k < 50:
				t.output(dsts[rnd.IntN(len(dsts))])
			case k < 70:
				t.confirm(dsts[rnd.IntN(len(dsts))])
			case k < 82:
				na := ndp.NeighborAdvert{Solicited: rnd.IntN(2) == 0, Override: rnd.IntN(3) != 0,
					Target: targets[rnd.IntN(len(targets))], Router: rnd.IntN(4) == 0,
					Options: tlla(macs[rnd.IntN(len(macs))])}
				t.input(nd(na.Target, llUs), emitNA(na, na.Target, llUs))
			case k < 87:
				r := ndp.RouterAdvert{RouterLifetime: uint16(rnd.IntN(2) * 1800), Options: slla([]ether.Addr{macRouter, macNew}[rnd.IntN(2)])}
				if rnd.IntN(2) == 0 {
					valid := uint32(rnd.IntN(2) * 3600)
					r.Options.Prefixes = []ndp.PrefixInfo{{PrefixLen: 64, OnLink: true, ValidLifetime: valid, PreferredLifetime: valid, Prefix: gPrefix}}
				}
				t.input(nd(llRouter, ipv6.AllNodes()), emitRA(r, llRouter, ipv6.AllNodes()))
			default:
				t.now += time.Duration(rnd.Int64N(int64(20 * time.Second)))
				t.poll()
			}
			t.same(step)
		}
		st := t.cached.Stats()
		// The walk went through every case the cache must follow.
		Expect(st.LinkAddrChanges).To(BeNumerically(">", 10))
		Expect(st.Confirmations).To(BeNumerically(">", 100))
		Expect(st.DestinationsFlushed).To(BeNumerically(">", 10))
		Expect(st.NUDFailed + st.ResolutionsFailed).To(BeNumerically(">", 0))
	})

	It("follows a neighbour's new link-layer address at once, though the entry stays REACHABLE (RFC 4861 section 7.2.5)", func() {
		n, rec := upNode(quiet())
		var p ndp.Path
		now := 2 * time.Second
		hop, ok := n.NextHopPath(now, &p, llPeer)
		Expect(ok).To(BeTrue())
		_, ok = n.ResolvePath(now, &p, hop, &hw.Mbuf{}, rec)
		Expect(ok).To(BeFalse(), "resolution starts")
		advertise(n, rec, now, ndp.NeighborAdvert{Solicited: true, Override: true, Target: llPeer, Options: tlla(macPeer)})
		for range 2 {
			hop, _ = n.NextHopPath(now, &p, llPeer)
			mac, ok := n.ResolvePath(now, &p, hop, &hw.Mbuf{}, rec)
			Expect(ok).To(BeTrue())
			Expect(mac).To(Equal(macPeer))
		}
		gen := n.Generation()
		advertise(n, rec, now, ndp.NeighborAdvert{Solicited: true, Override: true, Target: llPeer, Options: tlla(macNew)})
		Expect(n.Generation()).NotTo(Equal(gen))
		Expect(state(n, llPeer)).To(Equal(ndp.Reachable))
		hop, _ = n.NextHopPath(now, &p, llPeer)
		mac, ok := n.ResolvePath(now, &p, hop, &hw.Mbuf{}, rec)
		Expect(ok).To(BeTrue())
		Expect(mac).To(Equal(macNew))
	})

	It("leaves the generation alone on confirmations and refreshed router lifetimes, so a busy connection keeps its path", func() {
		n, rec := upNode(quiet())
		var p ndp.Path
		now := 2 * time.Second
		ra(n, rec, now, ndp.RouterAdvert{RouterLifetime: 1800, Options: slla(macRouter)})
		advertise(n, rec, now, ndp.NeighborAdvert{Solicited: true, Override: true, Target: llPeer, Options: tlla(macPeer)})
		gen := n.Generation()
		for k := range 5 {
			t := now + time.Duration(k)*time.Second
			n.NextHopPath(t, &p, llPeer)
			n.ConfirmPath(t, &p, llPeer)
			ra(n, rec, t, ndp.RouterAdvert{RouterLifetime: 1800, Options: slla(macRouter)})
		}
		Expect(n.Generation()).To(Equal(gen))
		// A router going away changes it: the next hops it gave go.
		ra(n, rec, now+6*time.Second, ndp.RouterAdvert{RouterLifetime: 0, Options: slla(macRouter)})
		Expect(n.Generation()).NotTo(Equal(gen))
		_, ok := n.NextHopPath(now+6*time.Second, &p, farAway)
		Expect(ok).To(BeFalse(), "no default router left")
	})
})
