package iface

import (
	"github.com/savanna-sim/savanna/stack/stackcost"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// arpSink is the Interface seen as the ARP cache's output (a distinct
// type keeps the Sink methods out of the Interface's API).
type arpSink Interface

func (i *Interface) arpSink() *arpSink { return (*arpSink)(i) }

// SendARP builds and transmits one ARP packet.
func (s *arpSink) SendARP(now time.Duration, r arp.Repr, dst ether.Addr) {
	i := (*Interface)(s)
	m := i.link.Alloc()
	if m == nil {
		i.stats.Tx.NoMbuf++
		i.stats.Tx.ARPNoMbuf++
		return
	}
	b, err := m.Append(ether.HeaderLen + arp.PacketLen)
	if err != nil {
		i.stats.Tx.NoMbuf++
		i.stats.Tx.ARPNoMbuf++
		m.Free()
		return
	}
	ether.Repr{Dst: dst, Src: i.mac, EtherType: ether.TypeARP}.Emit(ether.Frame(b))
	r.Emit(arp.Packet(b[ether.HeaderLen:]))
	i.charge(CostARP, 1)
	i.transmit(m)
}

// SendPending transmits a frame that waited for resolution.
func (s *arpSink) SendPending(now time.Duration, m *hw.Mbuf, mac ether.Addr) {
	i := (*Interface)(s)
	ether.Frame(m.Data()).SetDst(mac)
	i.transmit(m)
}

// DropPending frees a frame the cache gave up on (counted there, and
// here as an IP output discard).
func (s *arpSink) DropPending(m *hw.Mbuf) {
	i := (*Interface)(s)
	i.stats.IP.OutDiscards++
	m.Free()
}

// reasmSink is the Interface seen as the reassembler's output.
type reasmSink Interface

// ReassemblyTimeout sends ICMP Time Exceeded, code 1, quoting the first
// fragment (RFC 792; RFC 1122 section 3.3.2).
func (s *reasmSink) ReassemblyTimeout(now time.Duration, quote []byte) {
	i := (*Interface)(s)
	i.charge(stackcost.Timer, 1)
	i.sendError(now, ipv4.Packet(quote), false, uint8(icmp.TypeTimeExceeded), icmp.CodeReasmExceeded, 0)
}
