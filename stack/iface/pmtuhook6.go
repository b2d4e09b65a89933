package iface

import (
	"time"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

// PathMTUHandler6 is told that a Packet Too Big lowered the path MTU
// estimate for dst to mtu (RFC 8201 section 4), so that the
// packetization layer can follow it (section 5.2): TCP lowers the MSS of
// its connections to dst.
type PathMTUHandler6 func(now time.Duration, dst ipv6.Addr, mtu int)

// SetPathMTUHandler6 sets the handler told of every lowered path MTU
// (nil: none). It changes nothing on an interface without IPv6.
func (i *Interface) SetPathMTUHandler6(h PathMTUHandler6) {
	if i.v6 != nil {
		i.v6.onPathMTU = h
	}
}

// pathMTULowered tells the handler the estimate for dst went down.
func (i *Interface) pathMTULowered(now time.Duration, dst ipv6.Addr) {
	if h := i.v6.onPathMTU; h != nil {
		h(now, dst, i.PathMTU6(now, dst))
	}
}
