package iface

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// rxMeta is what the layers below tell the layers above about one
// datagram.
type rxMeta struct {
	m             *hw.Mbuf // nil for a reassembled datagram
	linkBroadcast bool     // frame sent to a group MAC address
	ipBroadcast   bool     // datagram sent to a broadcast IP address
}

// Input processes one received frame. It owns m: it frees it, queues it
// on a UDP socket, or lends it to a transport handler during the call.
// Malformed frames at any layer are counted by layer and reason and
// dropped.
func (i *Interface) Input(now time.Duration, m *hw.Mbuf) {
	if m == nil {
		return
	}
	i.stats.Eth.RxFrames++
	i.charge(CostFrameRx, 1)
	if m.Next != nil || m.DataOff < 0 || m.DataLen < 0 || m.DataOff+m.DataLen > len(m.Buf) {
		i.stats.Eth.RxChained++
		m.Free()
		return
	}
	data := m.Data()
	i.stats.Eth.RxBytes += uint64(len(data))
	eth, err := ether.Parse(ether.Frame(data))
	if err != nil {
		i.stats.Eth.countError(err)
		m.Free()
		return
	}
	if eth.Tagged {
		i.stats.Eth.RxVLAN++
		m.Free()
		return
	}
	if !eth.Src.IsUnicast() {
		i.stats.Eth.RxBadSource++
		m.Free()
		return
	}
	switch {
	case eth.Dst == i.mac, eth.Dst.IsBroadcast():
	case eth.Dst.IsMulticast() && i.v6 != nil && eth.EtherType == ether.TypeIPv6 && i.multicastAccepted(eth.Dst):
	case eth.Dst.IsMulticast():
		i.stats.Eth.RxMulticast++
		m.Free()
		return
	default:
		i.stats.Eth.RxOtherHost++
		m.Free()
		return
	}
	payload := data[ether.HeaderLen:]
	switch {
	case eth.EtherType == ether.TypeARP && i.has4:
		i.arpInput(now, payload)
		m.Free()
	case eth.EtherType == ether.TypeIPv4 && i.has4:
		i.ipInput(now, payload, rxMeta{m: m, linkBroadcast: eth.Dst.IsBroadcast()})
	case eth.EtherType == ether.TypeIPv6 && i.v6 != nil:
		i.ip6Input(now, payload, m, eth.Dst.IsMulticast())
	default:
		i.stats.Eth.RxUnknownEtherType++
		m.Free()
	}
}

func (i *Interface) arpInput(now time.Duration, b []byte) {
	i.charge(CostARP, 1)
	r, err := arp.Parse(arp.Packet(b))
	if err != nil {
		i.arp.CountError(err)
		return
	}
	i.arp.Input(now, r, i.arpSink())
}

// ipInput validates a datagram and delivers it (after reassembly if it
// is a fragment). It frees meta.m unless a layer above keeps it.
func (i *Interface) ipInput(now time.Duration, b []byte, meta rxMeta) {
	st := &i.stats.IP
	st.InReceives++
	i.charge(CostIPRx, 1)
	m := meta.m
	verify := true
	if m.Flags&hw.RxIPChecksumBad != 0 {
		st.CountError(ipv4.ErrChecksum)
		m.Free()
		return
	}
	if m.Flags&hw.RxIPChecksumGood != 0 {
		verify = false
		st.RxChecksumOffloaded++
	}
	r, err := ipv4.Parse(ipv4.Packet(b), verify)
	if err != nil {
		st.CountError(err)
		m.Free()
		return
	}
	if verify {
		i.charge(hw.CostChecksumByte, int64(r.HeaderLen))
	}
	p := ipv4.Packet(b[:r.HeaderLen+r.PayloadLen])
	// Destination: ours or a broadcast of this link (RFC 1122 section
	// 3.2.1.3); we forward nothing and join no group.
	switch {
	case r.Dst == i.ip:
	case i.isBroadcast(r.Dst):
		meta.ipBroadcast = true
	default:
		st.InAddrErrors++
		m.Free()
		return
	}
	// Source: must name one host (RFC 1122 section 3.2.1.3: silently
	// discard a datagram from a broadcast, multicast or loopback source).
	if ipv4.IsMulticast(r.Src) || i.isBroadcast(r.Src) || ipv4.IsLoopback(r.Src) || ipv4.IsReserved(r.Src) {
		st.InAddrErrors++
		m.Free()
		return
	}
	if r.IsFragment() {
		d, _ := i.reasm.Input(now, p, r)
		m.Free()
		if d == nil {
			return
		}
		rr, err := ipv4.Parse(d, false)
		if err != nil { // cannot happen: the reassembler wrote the header
			st.CountError(err)
			return
		}
		meta.m = nil
		i.deliver(now, d, rr, meta)
		return
	}
	i.deliver(now, p, r, meta)
}

// deliver hands a whole datagram to its protocol.
func (i *Interface) deliver(now time.Duration, p ipv4.Packet, r ipv4.Repr, meta rxMeta) {
	st := &i.stats.IP
	payload := p[r.HeaderLen:]
	switch r.Protocol {
	case ipv4.ProtoICMP:
		st.InDelivers++
		i.icmpInput(now, p, r, payload, meta)
	case ipv4.ProtoUDP:
		st.InDelivers++
		i.udpInput(now, p, r, payload, meta)
	default:
		h := i.handlers[r.Protocol]
		if h == nil {
			st.InUnknownProtos++
			// RFC 1122 section 3.2.2.1: protocol unreachable.
			i.sendError(now, p, meta.linkBroadcast, 3, 2, 0)
			freeMbuf(meta.m)
			return
		}
		if r.Protocol == ipv4.ProtoTCP && !i.tcpChecksumOK(r, payload, meta.m) {
			i.stats.TCP.InCsumErrors++
			freeMbuf(meta.m)
			return
		}
		st.InDelivers++
		if r.Protocol == ipv4.ProtoTCP {
			i.stats.TCP.InSegs++
		}
		h.HandleSegment(now, Segment{
			Src: r.Src, Dst: r.Dst, Protocol: r.Protocol, TOS: r.TOS, TTL: r.TTL,
			Broadcast: meta.ipBroadcast || meta.linkBroadcast,
			IP:        p, Payload: payload, Mbuf: meta.m,
		})
		freeMbuf(meta.m)
	}
}

// tcpChecksumOK checks a TCP segment's checksum: the NIC's verdict when
// it gives one, else in software over the pseudo-header (RFC 9293
// section 3.1).
func (i *Interface) tcpChecksumOK(r ipv4.Repr, seg []byte, m *hw.Mbuf) bool {
	if m != nil {
		if m.Flags&hw.RxL4ChecksumBad != 0 {
			return false
		}
		if m.Flags&hw.RxL4ChecksumGood != 0 {
			i.stats.TCP.InCsumOffload++
			return true
		}
	}
	i.charge(hw.CostChecksumByte, int64(len(seg)))
	return tcp.VerifyChecksum(seg, pseudoHeaderSum(r.Src, r.Dst, ipv4.ProtoTCP, len(seg)))
}

func freeMbuf(m *hw.Mbuf) {
	if m != nil {
		m.Free()
	}
}
