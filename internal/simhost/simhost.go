// Package simhost wires a network stack instance to a simulated core and
// NIC queue, with the metering its stack kind needs. The rig and the
// specs that build hosts by hand use it, so that a kernel-stack core is
// priced the same way everywhere. For those specs it also builds the
// hosts themselves (NewNIC, NewHost), so that each package's harness
// says only what is particular to it.
package simhost

import (
	"github.com/savanna-sim/savanna/internal/costops"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/sim/numa"
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

// Placement is where a stack instance's memory sits for its core.
type Placement struct {
	// RemoteMemory is how much dearer the instance's packet memory (its
	// port's mbuf pool) is for its core than local memory: the
	// topology's AccessFactor(core, pool's node) - 1, 0 on the same
	// node. Above 0 the instance's meter is decorated with
	// numa.PacketMemory.
	RemoteMemory float64
	// ConnCache is the host's per-connection working set of the kernel
	// path (cost.Model.ConnCache; zero: none modelled). A kernel-mode
	// instance charges it on its core for the instance's established
	// connections (RSS keeps a connection on its queue's CPU, whose
	// softirq touches that socket), and on a calling thread's core, for
	// the transmit its socket calls run, for HostConns'.
	ConnCache cost.ConnCache
	// HostConns counts the established connections of the host's whole
	// stack, those an application thread's system calls may touch (nil:
	// the instance's own).
	HostConns func() int
}

// EstablishedConns returns the established connections of in (RFC 1213
// tcpCurrEstab: ESTABLISHED and CLOSE-WAIT), the sockets whose state a
// segment's processing touches; a connection in TIME-WAIT keeps only an
// inet_timewait_sock, which no segment of a live connection touches.
func EstablishedConns(in *lstack.Instance) int { return int(in.TCP().Stats().CurrEstab) }

// BindStack binds queue q of port to core and attaches the instance to
// it, its memory placed as at says. A user-space instance's driver and
// stack work are charged to the layers "driver" and "stack"; a
// kernel-mode instance's (and the NIC queue's) go through
// cost.KernelPath, to the layer "kernel", and the calls its applications
// make go through cost.KernelSyscalls on their own meters, the transmit
// those calls queue through cost.KernelPath on the caller's core.
func BindStack(core *sim.Core, port *nic.Port, q int, in *lstack.Instance, at Placement) error {
	if in.Mode() != lstack.ModeKernel {
		if err := port.BindQueue(q, core.Meter(LayerDriver)); err != nil {
			return err
		}
		if at.RemoteMemory > 0 {
			// Decorate the meter the core hands the instance each turn,
			// not a layer's view: what TCP charges while an application
			// on the core calls it stays the application's.
			core.AttachAs(LayerStack, &remotePackets{p: in, remote: at.RemoteMemory})
		} else {
			core.AttachAs(LayerStack, in)
		}
		return nil
	}
	kp := cost.NewKernelPath(core.Meter(LayerKernel), costops.KernelModelOps(), core.Wake)
	own := func() int { return EstablishedConns(in) }
	kp.SetConnCache(at.ConnCache, own)
	if err := port.BindQueue(q, kp); err != nil {
		return err
	}
	host := at.HostConns
	if host == nil {
		host = own
	}
	in.SetAppMeter(kernelSyscalls)
	in.SetSenderMeter(func(m hw.Meter) hw.Meter { return kernelSender(m, at.ConnCache, host) })
	core.AttachAs(LayerKernel, Metered{Poller: in, Meter: placed(kp, at)})
	return nil
}

// kernelSender prices a socket call's own transmit on the calling
// thread's core as the kernel's path, on that core's layer "kernel":
// Linux runs tcp_sendmsg -> tcp_push -> tcp_write_xmit -> ip_queue_xmit
// -> dev_queue_xmit in the system call's context (net/ipv4/tcp.c,
// net/ipv4/tcp_output.c), not on the CPU that takes the NIC's
// interrupts (lstack.Instance.SetSenderMeter). Its segments pay the
// per-connection misses of the connections active counts: the thread's
// core touches the state of every connection it sends on.
func kernelSender(m hw.Meter, cc cost.ConnCache, active func() int) hw.Meter {
	if c, ok := m.(*sim.Core); ok {
		m = c.Meter(LayerKernel)
	}
	kp := cost.NewKernelPath(m, costops.KernelModelOps(), nil)
	kp.SetConnCache(cc, active)
	return kp
}

// kernelSyscalls is the application-side decorator of a kernel-stack
// host.
func kernelSyscalls(m hw.Meter) hw.Meter {
	return cost.NewKernelSyscalls(m, costops.KernelModelOps())
}

// placed returns m decorated with the packet memory's NUMA cost when
// that memory is remote, m itself otherwise.
func placed(m hw.Meter, at Placement) hw.Meter {
	if at.RemoteMemory > 0 {
		return numa.NewPacketMemory(m, at.RemoteMemory)
	}
	return m
}

// remotePackets runs a poller on the meter its core hands it, decorated
// with numa.PacketMemory (made once per meter seen).
type remotePackets struct {
	p      sim.Poller
	remote float64
	last   hw.Meter
	m      *numa.PacketMemory
}

// Poll implements sim.Poller.
func (r *remotePackets) Poll(m hw.Meter) (bool, time.Duration) {
	if m != r.last {
		r.last, r.m = m, numa.NewPacketMemory(m, r.remote)
	}
	return r.p.Poll(r.m)
}

// BindBridge attaches the stack thread's end of the asymmetric model
// (lstack.Bridge) to its instance's core, on the layer "stack", and
// hands its sockets' rings and calls over in virtual time (Handoff on
// eng): what an application thread writes at its clock reaches the stack
// thread no earlier, and what the stack thread writes reaches the
// application no earlier than the stack's clock. On a kernel-stack host
// its work is priced as the kernel's by cost.KernelPath: no ring, no
// socket-call service, a softirq's direct wake-up of a sleeping thread.
func BindBridge(eng *sim.Engine, core *sim.Core, b *lstack.Bridge) {
	b.SetHandoffs(NewBridgeHandoffs(eng))
	if b.Instance().Mode() != lstack.ModeKernel {
		core.AttachAs(LayerStack, b)
		return
	}
	core.AttachAs(LayerStack, Metered{Poller: b, Meter: cost.NewKernelPath(core.Meter(LayerStack), costops.KernelModelOps(), core.Wake)})
}

// Metered runs a poller with a meter of its own instead of the one its
// core hands it: the core's time and doorbell, another price list.
type Metered struct {
	Poller sim.Poller
	Meter  hw.Meter
}

// Poll implements sim.Poller.
func (m Metered) Poll(hw.Meter) (bool, time.Duration) { return m.Poller.Poll(m.Meter) }
