package rig

import (
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ndp"
)

// ifaceConfig is the interface configuration of a stack instance on
// port p: its address, of either family (iface takes "fd00::1/64" alone
// as an IPv6-only interface).
//
// On an IPv6 port, Duplicate Address Detection is off (RFC 4862 section
// 5.1's DupAddrDetectTransmits 0, Linux's dad_transmits=0): a scenario's
// addresses are given by hand and scenario validation already refuses
// two NICs with one address, so DAD could only delay the start by its
// random delay and RetransTimer (up to 2 s, longer than most runs) and
// make every connection opened at time 0 fail. A scenario has no router
// either, so no Router Solicitations are sent (MAX_RTR_SOLICITATIONS 0).
// Neighbour resolution, unreachability detection and MLD run as RFC 4861
// and RFC 3810 say.
func ifaceConfig(p *port) iface.Config {
	c := iface.Config{Address: p.ip.String()}
	if p.ip.Addr().Is6() {
		nd := ndp.DefaultConfig()
		nd.DupAddrDetectTransmits = 0
		nd.MaxRtrSolicitations = 0
		c.IPv6 = iface.IPv6Config{Address: c.Address, ND: nd, NDSet: true}
		c.Address = ""
	}
	return c
}
