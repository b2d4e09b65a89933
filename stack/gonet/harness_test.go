package gonet_test

import (
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/stack/rt"
)

// wire is two stacks in real time joined by a ring pair (livetest's): A
// is 10.9.0.1, B is 10.9.0.2.
type wire struct {
	a, b   *rt.Runtime
	pa, pb *ringdev.Port
}

func newWire(lcoresA, lcoresB int) (*wire, error) {
	p, err := livetest.NewRingPair(lcoresA, lcoresB)
	if err != nil {
		return nil, err
	}
	return &wire{a: p.A, b: p.B, pa: p.PA, pb: p.PB}, nil
}

func (w *wire) stop() {
	w.a.Stop()
	w.b.Stop()
}
