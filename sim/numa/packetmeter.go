package numa

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// PacketMemory is a meter decorator that prices the packet memory a
// stack instance touches when that memory (its port's mbuf pool and
// descriptor rings) sits on another NUMA node than the instance's core:
// each byte costs hw.CostRemoteNUMAByte times the remote factor. The
// instance only says which bytes it touched (PacketBytes, the optional
// interface stack/lstack.PacketMeter); what that costs is this model's,
// fed by the rig with the topology's access factor, so the product knows
// nothing of NUMA distances.
type PacketMemory struct {
	m      hw.Meter
	remote float64
}

// NewPacketMemory decorates m. remote is how much dearer the packet
// memory is for the core than local memory: the topology's
// AccessFactor(core, pool's node) - 1, 0 on the same node, in which case
// the decorator charges nothing extra (a caller may then leave m as it
// is).
func NewPacketMemory(m hw.Meter, remote float64) *PacketMemory {
	return &PacketMemory{m: m, remote: remote}
}

// Now implements hw.Meter.
func (p *PacketMemory) Now() time.Duration { return p.m.Now() }

// Idle implements hw.Meter.
func (p *PacketMemory) Idle(d time.Duration) { p.m.Idle(d) }

// Charge implements hw.Meter.
func (p *PacketMemory) Charge(op hw.CostOp, n int64) { p.m.Charge(op, n) }

// PacketBytes charges touching n bytes of one packet: rounded per
// packet, as a packet's bytes are touched together.
func (p *PacketMemory) PacketBytes(n int) {
	if p.remote > 0 {
		p.m.Charge(hw.CostRemoteNUMAByte, int64(float64(n)*p.remote+0.5))
	}
}
