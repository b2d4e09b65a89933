package iface

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
	"github.com/savanna-sim/savanna/stack/stackcost"
)

// ndpSink is the Interface seen as Neighbor Discovery's output.
type ndpSink Interface

func (i *Interface) ndpSink() *ndpSink { return (*ndpSink)(i) }

// SendICMPv6 puts one ND or MLD message into a packet and transmits it
// to out.LinkDst: IPv6 header, for MLD the hop-by-hop Router Alert
// (RFC 3810 section 5, RFC 2711), then the message.
func (s *ndpSink) SendICMPv6(now time.Duration, out ndp.Output) {
	i := (*Interface)(s)
	v := i.v6
	ext := 0
	next := ipv6.NextICMPv6
	if out.RouterAlert {
		ext, next = 8, ipv6.NextHopByHop
	}
	m := i.link.Alloc()
	if m == nil {
		i.stats.Tx.NoMbuf++
		v.stats.ICMPv6.OutDropped++
		return
	}
	b, err := m.Append(ether.HeaderLen + ipv6.HeaderLen + ext + len(out.Msg))
	if err != nil {
		i.stats.Tx.NoMbuf++
		v.stats.ICMPv6.OutDropped++
		m.Free()
		return
	}
	ether.Repr{Dst: out.LinkDst, Src: i.mac, EtherType: ether.TypeIPv6}.Emit(ether.Frame(b))
	p := b[ether.HeaderLen:]
	ipv6.Repr{Src: out.Src, Dst: out.Dst, NextHeader: next, PayloadLen: ext + len(out.Msg), HopLimit: out.HopLimit}.Emit(ipv6.Packet(p))
	if out.RouterAlert {
		ra := ndp.RouterAlertHopByHop(ipv6.NextICMPv6)
		copy(p[ipv6.HeaderLen:], ra[:])
	}
	copy(p[ipv6.HeaderLen+ext:], out.Msg)
	if len(out.Msg) > 0 {
		v.stats.ICMPv6.CountOut(icmpv6.Type(out.Msg[0]))
	}
	i.charge(CostARP, 1)
	i.transmit(m)
}

// SendPending transmits a frame that waited for resolution.
func (s *ndpSink) SendPending(now time.Duration, m *hw.Mbuf, mac ether.Addr) {
	i := (*Interface)(s)
	ether.Frame(m.Data()).SetDst(mac)
	i.transmit(m)
}

// DropPending frees a frame the node gave up on (counted there, and
// here as an output discard).
func (s *ndpSink) DropPending(m *hw.Mbuf) {
	i := (*Interface)(s)
	i.v6.stats.Out.Discards++
	m.Free()
}

// AddressUnreachable returns a packet whose next hop did not resolve
// to its transport as ICMPv6 destination unreachable, code 3 (RFC 4861
// section 7.2.2): the packet is ours, so the error is delivered here, as
// Linux's ndisc_error_report hands it to the socket, rather than sent.
func (s *ndpSink) AddressUnreachable(now time.Duration, m *hw.Mbuf) {
	i := (*Interface)(s)
	v := i.v6
	v.stats.Out.AddressUnreachable++
	if d := m.Data(); len(d) > ether.HeaderLen {
		if p, err := ipv6.Check(d[ether.HeaderLen:]); err == nil {
			v.stats.ICMPv6.CountOut(icmpv6.TypeDestUnreach)
			i.errorToTransport6(now, ICMPv6Error{From: p.Src(), Type: uint8(icmpv6.TypeDestUnreach), Code: icmpv6.CodeAddrUnreach, Quoted: p})
		}
	}
	m.Free()
}

// Notify acts on the node's events: a change of groups reloads the
// multicast filter (ours and the NIC's), a duplicate link-local address
// stops IPv6 (RFC 4862 section 5.4.5).
func (s *ndpSink) Notify(now time.Duration, ev ndp.Event) {
	i := (*Interface)(s)
	v := i.v6
	switch ev.Kind {
	case ndp.EventGroupsChanged:
		v.groups = v.node.Groups(v.groups[:0])
		v.mcast = v.node.MulticastMACs(v.mcast[:0])
		if f, ok := i.link.(MulticastFilter); ok {
			f.SetMulticastMACs(v.mcast)
		}
	case ndp.EventInterfaceDisabled:
		v.disabled = true
	}
}

// reasm6Sink is the Interface seen as the IPv6 reassembler's output.
type reasm6Sink Interface

// ReassemblyTimeout sends Time Exceeded, code 1, about the first
// fragment (RFC 8200 section 4.5).
func (s *reasm6Sink) ReassemblyTimeout(now time.Duration, first []byte) {
	i := (*Interface)(s)
	i.charge(stackcost.Timer, 1)
	i.sendError6(now, icmpv6.ErrorRequest{Type: icmpv6.TypeTimeExceeded, Code: icmpv6.CodeReasmExceeded, Invoking: first})
}

// multicastAccepted reports whether a frame to group MAC dst is for a
// group IPv6 listens to.
func (i *Interface) multicastAccepted(dst ether.Addr) bool {
	if i.v6 == nil {
		return false
	}
	for _, a := range i.v6.mcast {
		if a == dst {
			return true
		}
	}
	i.v6.stats.Out.RxMulticastFiltered++
	return false
}
