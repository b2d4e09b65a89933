package livetest

import (
	"fmt"

	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
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

// NewRingPair starts the two runtimes with lcoresA and lcoresB lcores.
func NewRingPair(lcoresA, lcoresB int) (*RingPair, error) {
	pa, pb, err := ringdev.NewPair(ringdev.Config{Name: "a"}, ringdev.Config{Name: "b"})
	if err != nil {
		return nil, err
	}
	mk := func(p *ringdev.Port, addr string, k int, seed uint64) (*rt.Runtime, error) {
		pool, err := ringdev.NewMempool(p.Name()+".pool", 16384, 2048+128)
		if err != nil {
			return nil, err
		}
		cfg := rt.Config{Lcores: k, Seed: seed, Spin: 20_000, NoLockOSThread: true, RxRing: 4096, TxRing: 4096}
		r, err := rt.New(cfg, lstack.Config{Iface: iface.Config{Address: addr}, TCP: tcp.DefaultConfig()}, p, pool)
		if err != nil {
			return nil, fmt.Errorf("runtime %s: %w", addr, err)
		}
		if err := r.Start(); err != nil {
			return nil, fmt.Errorf("runtime %s: %w", addr, err)
		}
		return r, nil
	}
	a, err := mk(pa, "10.9.0.1/24", lcoresA, 1)
	if err != nil {
		return nil, err
	}
	b, err := mk(pb, "10.9.0.2/24", lcoresB, 2)
	if err != nil {
		a.Stop()
		return nil, err
	}
	return &RingPair{A: a, B: b, PA: pa, PB: pb}, nil
}

// Stop stops both runtimes.
func (p *RingPair) Stop() {
	p.A.Stop()
	p.B.Stop()
}
