package rt

import (
	"net/netip"

	"github.com/savanna-sim/savanna/stack/ndp"
)

// Addr6 is one IPv6 address of an lcore's interface with its state:
// "tentative" while Duplicate Address Detection runs, "preferred" (or
// "deprecated") once assigned, "duplicate" when DAD found another node
// using it (RFC 4862 sections 5.4 and 5.4.5: never used, as Linux keeps a
// "dadfailed" address listed). Each lcore's instance runs its own DAD on
// the same addresses, as each keeps its own neighbour cache.
type Addr6 struct {
	Addr      netip.Addr `json:"addr"`
	PrefixLen int        `json:"prefix_len"`
	State     string     `json:"state"`
	// Origin is "link-local" (formed from the MAC), "static" or "slaac".
	Origin string `json:"origin"`
}

// Prefix returns the address with its prefix length.
func (a Addr6) Prefix() netip.Prefix { return netip.PrefixFrom(a.Addr, a.PrefixLen) }

// addrs6 lists the lcore's IPv6 addresses (lcore only).
func (lc *Lcore) addrs6() []Addr6 {
	n := lc.inst.Iface().NDP()
	if n == nil {
		return nil
	}
	infos := n.Addresses(nil)
	out := make([]Addr6, len(infos))
	for i, in := range infos {
		out[i] = Addr6{Addr: netip.AddrFrom16(in.Addr), PrefixLen: in.PrefixLen, State: in.State.String(), Origin: originName(in.Origin)}
	}
	return out
}

func originName(o ndp.AddrOrigin) string {
	switch o {
	case ndp.OriginLinkLocal:
		return "link-local"
	case ndp.OriginStatic:
		return "static"
	case ndp.OriginSLAAC:
		return "slaac"
	}
	return "unknown"
}

// Addrs6 returns the IPv6 addresses of lcore 0's interface and their
// Duplicate Address Detection state (nil without IPv6), read on the
// lcore. Safe from any goroutine.
func (r *Runtime) Addrs6() []Addr6 {
	if !r.has6 {
		return nil
	}
	var out []Addr6
	r.onLcore(r.lcores[0], func(lc *Lcore) { out = lc.addrs6() })
	return out
}
