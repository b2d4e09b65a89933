package livetest

import (
	"fmt"
	"time"

	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/ndp"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// RingPair is two stacks running in real time joined by an in-memory
// ring pair (hw/ringdev), no kernel involved: A is 10.9.0.1, B is
// 10.9.0.2. Specs of what watches a running stack (metrics, ctl) run
// real traffic over it without root, and so do stack/gonet's own specs.
type RingPair struct {
	A, B   *rt.Runtime
	PA, PB *ringdev.Port
}

// RingPairConfig says how NewRingPairWith makes the two stacks.
type RingPairConfig struct {
	// LcoresA and LcoresB are each stack's lcores (1 when 0).
	LcoresA, LcoresB int
	// A and B are each stack's addresses: an IPv4 and/or an IPv6 CIDR
	// (iface.Config's Address and IPv6.Address); "" keeps 10.9.0.1/24
	// and 10.9.0.2/24 when the other of the pair is also "".
	A4, A6, B4, B6 string
	// FastDAD shortens Duplicate Address Detection's wait (one
	// solicitation, RetransTimer 50 ms, no start delay), so that an IPv6
	// address is usable within about 50 ms rather than up to 2 s.
	FastDAD bool
	// AFirst makes B only once A's IPv6 addresses passed DAD (10 s at
	// most), so that A holds them first.
	AFirst bool
}

// NewRingPair starts the two runtimes with lcoresA and lcoresB lcores,
// IPv4 only.
func NewRingPair(lcoresA, lcoresB int) (*RingPair, error) {
	return NewRingPairWith(RingPairConfig{LcoresA: lcoresA, LcoresB: lcoresB})
}

// NewRingPairWith starts the two runtimes as c says.
func NewRingPairWith(c RingPairConfig) (*RingPair, error) {
	lcoresA, lcoresB := max(c.LcoresA, 1), max(c.LcoresB, 1)
	if c.A4 == "" && c.A6 == "" {
		c.A4 = "10.9.0.1/24"
	}
	if c.B4 == "" && c.B6 == "" {
		c.B4 = "10.9.0.2/24"
	}
	ifc := func(v4, v6 string) iface.Config {
		cfg := iface.Config{Address: v4, IPv6: iface.IPv6Config{Address: v6}}
		if v6 != "" && c.FastDAD {
			nd := ndp.DefaultConfig()
			nd.RetransTimer = 50 * time.Millisecond
			nd.MaxRtrSolicitationDelay = 0
			nd.MaxRtrSolicitations = 0
			cfg.IPv6.ND, cfg.IPv6.NDSet = nd, true
		}
		return cfg
	}
	pa, pb, err := ringdev.NewPair(ringdev.Config{Name: "a"}, ringdev.Config{Name: "b"})
	if err != nil {
		return nil, err
	}
	mk := func(p *ringdev.Port, icfg iface.Config, k int, seed uint64) (*rt.Runtime, error) {
		name := icfg.Address + " " + icfg.IPv6.Address
		pool, err := ringdev.NewMempool(p.Name()+".pool", 16384, 2048+128)
		if err != nil {
			return nil, err
		}
		cfg := rt.Config{Lcores: k, Seed: seed, Spin: 20_000, NoLockOSThread: true, RxRing: 4096, TxRing: 4096}
		r, err := rt.New(cfg, lstack.Config{Iface: icfg, TCP: tcp.DefaultConfig()}, p, pool)
		if err != nil {
			return nil, fmt.Errorf("runtime %s: %w", name, err)
		}
		if err := r.Start(); err != nil {
			return nil, fmt.Errorf("runtime %s: %w", name, err)
		}
		return r, nil
	}
	a, err := mk(pa, ifc(c.A4, c.A6), lcoresA, 1)
	if err != nil {
		return nil, err
	}
	if c.AFirst {
		for end := time.Now().Add(10 * time.Second); !Assigned6(a) && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	b, err := mk(pb, ifc(c.B4, c.B6), lcoresB, 2)
	if err != nil {
		a.Stop()
		return nil, err
	}
	return &RingPair{A: a, B: b, PA: pa, PB: pb}, nil
}

// Assigned6 reports whether every IPv6 address of r passed Duplicate
// Address Detection (true on a stack without IPv6).
func Assigned6(r *rt.Runtime) bool {
	for _, a := range r.Addrs6() {
		if a.State != "preferred" && a.State != "deprecated" {
			return false
		}
	}
	return true
}

// Stop stops both runtimes.
func (p *RingPair) Stop() {
	p.A.Stop()
	p.B.Stop()
}
