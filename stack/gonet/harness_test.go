package gonet_test

import (
	"fmt"

	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// wire is two stacks in real time joined by a ring pair: A is 10.9.0.1,
// B is 10.9.0.2.
type wire struct {
	a, b   *rt.Runtime
	pa, pb *ringdev.Port
}

func newWire(lcoresA, lcoresB int) (*wire, error) {
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
	return &wire{a: a, b: b, pa: pa, pb: pb}, nil
}

func (w *wire) stop() {
	w.a.Stop()
	w.b.Stop()
}
