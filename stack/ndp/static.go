package ndp

import (
	"time"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// AddNeighbor records mac as neighbour a's link-layer address, as if a
// message with a's link-layer address option had arrived (RFC 4861
// section 7.2.3's rule: the entry is STALE, and what waited for it is
// sent), for a caller that starts knowing its neighbours (a test bed
// whose hosts have talked before). Neighbour Unreachability Detection
// then runs as for any entry: the first packet moves it to DELAY, and
// an upper-layer confirmation or a probe's answer to REACHABLE.
func (n *Node) AddNeighbor(now time.Duration, a ipv6.Addr, mac ether.Addr, sink Sink) {
	if a.IsMulticast() || a.IsUnspecified() || !mac.IsUnicast() {
		return
	}
	n.learn(now, a, mac, sink)
}

// addStaticRouter puts the configured default router on the default
// router list for good (Config.DefaultRouter). The entry is first, so
// that next-hop determination (section 6.3.6) tries it before the
// routers advertisements add.
func (n *Node) addStaticRouter(a ipv6.Addr) {
	if i := n.findRouter(a); i >= 0 {
		n.routers[i].static, n.routers[i].expires = true, Never
		return
	}
	n.routers = append([]router{{addr: a, expires: Never, static: true}}, n.routers...)
	n.stats.RoutersAdded++
	n.flushDestinations()
}
