// Package simhost wires a network stack instance to a simulated core and
// NIC queue, with the metering its stack kind needs. The rig and the
// specs that build hosts by hand use it, so that a kernel-stack core is
// priced the same way everywhere. For those specs it also builds the
// hosts themselves (NewNIC, NewHost), so that each package's harness
// says only what is particular to it.
package simhost

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
)

// Layers of a core's CPU profile that the stack's wiring charges.
const (
	// LayerDriver is the poll-mode driver's burst calls.
	LayerDriver = "driver"
	// LayerStack is the user-space stack's protocol work.
	LayerStack = "stack"
	// LayerKernel is the kernel's network path: interrupts, softirq,
	// kernel IP and TCP.
	LayerKernel = "kernel"
)

// BindStack binds queue q of port to core and attaches the instance to
// it. A user-space instance's driver and stack work are charged to the
// layers "driver" and "stack"; a kernel-mode instance's (and the NIC
// queue's) go through cost.KernelPath, to the layer "kernel".
func BindStack(core *sim.Core, port *nic.Port, q int, in *lstack.Instance) error {
	if in.Mode() != lstack.ModeKernel {
		if err := port.BindQueue(q, core.Meter(LayerDriver)); err != nil {
			return err
		}
		core.AttachAs(LayerStack, in)
		return nil
	}
	kp := cost.NewKernelPath(core.Meter(LayerKernel), core.Wake)
	if err := port.BindQueue(q, kp); err != nil {
		return err
	}
	core.AttachAs(LayerKernel, Metered{Poller: in, Meter: kp})
	return nil
}

// Metered runs a poller with a meter of its own instead of the one its
// core hands it: the core's time and doorbell, another price list.
type Metered struct {
	Poller sim.Poller
	Meter  hw.Meter
}

// Poll implements sim.Poller.
func (m Metered) Poll(hw.Meter) (bool, time.Duration) { return m.Poller.Poll(m.Meter) }
