// Package netw puts three TCP/IP networks behind one interface so that
// the same workload code measures each of them: Savanna's user-space
// stack (two stacks in one process joined by an in-memory link), gVisor's
// netstack (two stacks joined by channel endpoints) and the kernel's
// loopback through Go's net package.
package netw

import (
	"context"
	"fmt"
	"net"
	"sort"
)

// Network is a pair of TCP endpoints: a server side that listens and a
// client side that dials it. Everything a workload does goes through
// net.Listener and net.Conn, so the application code is the same for
// every network.
type Network interface {
	// Name is "savanna", "gvisor" or "kernel".
	Name() string
	// MTU is the link's MTU (the IP datagram size).
	MTU() int
	// Family is the address family the two sides speak, 4 or 6.
	Family() int
	// Listen listens on the server side.
	Listen(port uint16) (net.Listener, error)
	// Dial connects from the client side to port on the server side.
	Dial(ctx context.Context, port uint16) (net.Conn, error)
	// Drops returns everything lost or refused on the link and in the
	// stacks since the network was made. A comparison that hides drops
	// is void, so every network reports them.
	Drops() Drops
	// Close tears the network down.
	Close() error
}

// Counter is one named counter.
type Counter struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// Drops are the losses a network saw. Link counts frames the link
// between the two stacks lost (full rings or queues, oversize frames);
// Stack counts packets a stack dropped or could not send (no buffer,
// malformed, full queues); Retransmits counts TCP retransmissions, the
// visible cost of any drop. Detail lists every non-zero loss counter by
// name, sorted; Counters lists other counters that help read a run
// (segments, delayed ACKs, lcore parks), sorted.
type Drops struct {
	Link        uint64    `json:"link"`
	Stack       uint64    `json:"stack"`
	Retransmits uint64    `json:"retransmits"`
	Detail      []Counter `json:"detail,omitempty"`
	Counters    []Counter `json:"counters,omitempty"`
}

// Sub returns d minus an earlier reading e (counters only grow).
func (d Drops) Sub(e Drops) Drops {
	return Drops{Link: d.Link - e.Link, Stack: d.Stack - e.Stack, Retransmits: d.Retransmits - e.Retransmits,
		Detail: subCounters(d.Detail, e.Detail), Counters: subCounters(d.Counters, e.Counters)}
}

// subCounters returns the non-zero differences of named counters.
func subCounters(now, before []Counter) []Counter {
	prev := make(map[string]uint64, len(before))
	for _, c := range before {
		prev[c.Name] = c.Value
	}
	var out []Counter
	for _, c := range now {
		if v := c.Value - prev[c.Name]; v != 0 {
			out = append(out, Counter{Name: c.Name, Value: v})
		}
	}
	return out
}

// String is a one-line summary.
func (d Drops) String() string {
	return fmt.Sprintf("link %d, stack %d, retransmits %d", d.Link, d.Stack, d.Retransmits)
}

// detail collects named counters, keeping the non-zero ones sorted.
type detail map[string]uint64

func (m detail) add(name string, v uint64) {
	if v != 0 {
		m[name] += v
	}
}

func (m detail) list() []Counter {
	out := make([]Counter, 0, len(m))
	for k, v := range m {
		out = append(out, Counter{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Config selects and sizes a network.
type Config struct {
	// Name is "savanna", "savanna-rtc", "gvisor" or "kernel".
	Name string `json:"name"`
	// MTU of the link (1500 or 9000; ignored by the kernel's loopback,
	// whose MTU is the host's).
	MTU int `json:"mtu"`
	// Family is 4 (the default when 0) or 6: which address family the
	// two sides are given and connect over (savanna: 10.9.0.1/24 and
	// 10.9.0.2/24, or fd00::1/64 and fd00::2/64; gvisor the same with its
	// ipv4 or ipv6 protocol; kernel 127.0.0.1 or ::1).
	Family int `json:"family"`
}

// Families lists the address families.
func Families() []int { return []int{4, 6} }

// Names lists the networks.
func Names() []string { return []string{"savanna", "savanna-rtc", "gvisor", "kernel"} }

// New makes the network cfg names.
func New(cfg Config) (Network, error) {
	if cfg.MTU == 0 {
		cfg.MTU = 1500
	}
	if cfg.Family == 0 {
		cfg.Family = 4
	}
	if cfg.Family != 4 && cfg.Family != 6 {
		return nil, fmt.Errorf("netw: address family %d (want 4 or 6)", cfg.Family)
	}
	if cfg.MTU < 576 || cfg.MTU > 9000 {
		return nil, fmt.Errorf("netw: mtu %d is outside 576..9000", cfg.MTU)
	}
	if cfg.Family == 6 && cfg.MTU < 1280 {
		// RFC 8200 section 5: every IPv6 link carries 1280 bytes.
		return nil, fmt.Errorf("netw: mtu %d is below IPv6's minimum link MTU 1280", cfg.MTU)
	}
	switch cfg.Name {
	case "savanna":
		return NewSavanna(cfg.MTU, cfg.Family)
	case "savanna-rtc":
		return NewSavannaRTC(cfg.MTU, cfg.Family)
	case "gvisor":
		return NewGVisor(cfg.MTU, cfg.Family)
	case "kernel":
		return NewKernel(cfg.Family)
	}
	return nil, fmt.Errorf("netw: unknown network %q (want one of %v)", cfg.Name, Names())
}
