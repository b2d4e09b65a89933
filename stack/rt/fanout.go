package rt

import (
	"time"

	"github.com/savanna-sim/savanna/stack/lstack"
)

// shareARP joins the lcores' instances in one ARP sharing group
// (lstack.Instance.SetPeers, stack/lstack/arpshare), the mechanism the
// virtual-time driver uses too: every instance keeps its own neighbour
// cache, so the one that receives an ARP frame hands each peer a copy
// through a lock-free ring, and the peer handles it on its own turn.
// The runtime supplies only the notify policy: a copy unparks the peer's
// lcore (Wake is safe from the sharing lcore's goroutine; the time is
// the sharer's and means nothing to a wall-clock lcore). The instances
// share the runtime's pool, which New requires to be safe for
// concurrent use. It runs before the lcores start, which orders it
// before their first poll.
func shareARP(lcores []*Lcore) {
	if len(lcores) < 2 {
		return
	}
	peers := make([]*lstack.Instance, len(lcores))
	for i, lc := range lcores {
		lc.inst.SetWake(func(time.Duration) { lc.Wake() })
		peers[i] = lc.inst
	}
	// Sharing is mutual: naming the peers once joins them all.
	lcores[0].inst.SetPeers(peers)
}

// arpCopyDrops returns the copies of ARP frames that could not be handed
// to an lcore (no mbuf, or its ring from the sharer was full), over all
// lcores. Safe from any goroutine.
func arpCopyDrops(lcores []*Lcore) uint64 {
	var n uint64
	for _, lc := range lcores {
		n += lc.inst.ARPCopyDrops()
	}
	return n
}
