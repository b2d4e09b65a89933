package ndp_test

import (
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

// IsAssigned answers from the last address it found first (findAddr's
// hint); whatever moves the address list under it, the answer must be
// the list's: a preferred or deprecated address, not a tentative or
// duplicate one, nor one removed (RFC 4862 section 5.4).
var _ = Describe("IsAssigned through findAddr's hint (RFC 4862 sections 5.4, 5.5.4)", func() {
	It("follows DAD, duplicates and removals that shift the list", func() {
		n, rec := upNode(quiet())
		pool := []ipv6.Addr{llUs, mustAddr("fd00::1:2:3"), mustAddr("fd00::4:5:6"), mustAddr("fd00::7:8:9"), mustAddr("fd01::a")}
		oracle := func(a ipv6.Addr) bool {
			for _, i := range n.Addresses(nil) {
				if i.Addr == a {
					return i.State == ndp.AddrPreferred || i.State == ndp.AddrDeprecated
				}
			}
			return false
		}
		rng := rand.New(rand.NewPCG(4862, 54))
		now := 2 * time.Second
		seen := map[bool]int{}
		for step := range 3000 {
			a := pool[1+rng.IntN(len(pool)-1)]
			switch rng.IntN(5) {
			case 0:
				_ = n.AddStatic(now, a, 64, rec) // refused when present
			case 1:
				n.RemoveAddress(now, a, rec)
			case 2:
				// Another node defends a: a duplicate while tentative
				// (RFC 4862 section 5.4.4), ignored once assigned.
				n.Input(now, nd(a, ipv6.AllNodes()), emitNA(ndp.NeighborAdvert{Override: true, Target: a, Options: tlla(macPeer)}, a, ipv6.AllNodes()), rec)
			default:
				// Time passes: DAD completes.
				now += time.Duration(1+rng.IntN(1500)) * time.Millisecond
				run(n, rec, now-time.Millisecond, now)
			}
			// Ask in a random order, so that the hint points anywhere
			// when the next event moves the list.
			for _, k := range rng.Perm(len(pool)) {
				want := oracle(pool[k])
				Expect(n.IsAssigned(pool[k])).To(Equal(want), "step %d: %v", step, pool[k])
				seen[want]++
			}
		}
		Expect(seen[true]).To(BeNumerically(">", 1000))
		Expect(seen[false]).To(BeNumerically(">", 1000))
		Expect(n.Stats().DADDuplicates).To(BeNumerically(">", 0))
		Expect(n.Stats().AddressesRemoved).To(BeNumerically(">", 0))
	})
})
