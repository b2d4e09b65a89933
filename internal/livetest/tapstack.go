package livetest

import (
	"fmt"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/hw/tap"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// TapStack is a Savanna stack the spec itself runs in real time on a TAP
// inside a network namespace, for what simrun serve cannot be asked to
// do (send a ping, read its neighbour cache).
type TapStack struct {
	R   *rt.Runtime
	Dev hw.EthDev
}

// StartTapStack attaches to the TAP name inside namespace ns, which the
// caller made and brought up (ip tuntap add dev NAME mode tap
// multi_queue; ip link set NAME up): hw/tap brings a link up when the
// port starts, from the thread that starts it, which is not in ns. It
// starts one lcore with the interface ic.
func StartTapStack(ns, name string, ic iface.Config) (*TapStack, error) {
	var dev *tap.Dev
	// The TAP belongs to the namespace of the thread that creates it.
	if err := InNetns(ns, func() error {
		var err error
		dev, err = tap.Open(tap.Config{Name: name, MTU: ic.MTU})
		return err
	}); err != nil {
		return nil, fmt.Errorf("tap %s in %s: %w", name, ns, err)
	}
	pool, err := ringdev.NewMempool("tapstack.pool", 8192, hw.DefaultHeadroom+max(ic.MTU, 1500)+14+64)
	if err != nil {
		_ = dev.Close()
		return nil, err
	}
	r, err := rt.New(rt.Config{NoLockOSThread: true}, lstack.Config{Iface: ic, TCP: tcp.DefaultConfig()}, dev, pool)
	if err != nil {
		_ = dev.Close()
		return nil, err
	}
	if err := r.Start(); err != nil {
		_ = dev.Close()
		return nil, err
	}
	return &TapStack{R: r, Dev: dev}, nil
}

// Stop stops the stack and closes the TAP.
func (s *TapStack) Stop() {
	s.R.Stop()
	if c, ok := s.Dev.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}
