package iface

import (
	"encoding/binary"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// ip6Input takes one IPv6 packet (EtherType 0x86DD). It owns m.
func (i *Interface) ip6Input(now time.Duration, b []byte, m *hw.Mbuf, linkMcast bool) {
	v := i.v6
	i.charge(CostIPRx, 1)
	if v.disabled {
		v.stats.IPv6.InReceives++
		v.stats.Out.RxDisabled++
		m.Free()
		return
	}
	if len(b) >= ipv6.HeaderLen && !i.acceptDst6(b) {
		v.stats.IPv6.InReceives++
		v.stats.IPv6.InAddrErrors++
		v.stats.Out.RxNotOurs++
		m.Free()
		return
	}
	res := v.rx.Input(now, b)
	switch res.Action {
	case ipv6.Deliver:
		if res.Reassembled {
			m.Free()
			m = nil
		}
		i.deliver6(now, res, m, linkMcast)
	case ipv6.Drop:
		if !res.ICMP.IsZero() {
			if req, ok := icmpv6.RequestFor(res, linkMcast, i.local6()); ok {
				i.sendError6(now, req)
			}
		}
		m.Free()
	default: // Held: the reassembler copied the fragment
		m.Free()
	}
}

// acceptDst6 reports whether the packet in b is for us: to an assigned
// address, to a group we listen to, or a Neighbor Solicitation or
// Advertisement about a tentative address of ours, which Duplicate
// Address Detection must see (RFC 4862 section 5.4: other packets to a
// tentative address are silently discarded).
func (i *Interface) acceptDst6(b []byte) bool {
	v := i.v6
	dst := ipv6.Packet(b).Dst()
	if dst.IsMulticast() {
		for _, g := range v.groups {
			if g == dst {
				return true
			}
		}
		return false
	}
	if v.node.IsAssigned(dst) {
		return true
	}
	p := ipv6.Packet(b)
	if p.NextHeader() != ipv6.NextICMPv6 || len(b) <= ipv6.HeaderLen {
		return false
	}
	t := icmpv6.Type(b[ipv6.HeaderLen])
	if t != icmpv6.TypeNeighborSolicitation && t != icmpv6.TypeNeighborAdvertisement {
		return false
	}
	v.addrs = v.node.Addresses(v.addrs[:0])
	for _, a := range v.addrs {
		if a.Addr == dst && a.State == ndp.AddrTentative {
			return true
		}
	}
	return false
}

// deliver6 hands a whole packet to its upper layer; m (nil when
// reassembled) is freed unless a UDP socket keeps it.
func (i *Interface) deliver6(now time.Duration, res ipv6.Result, m *hw.Mbuf, linkMcast bool) {
	p := res.Packet
	switch res.Proto {
	case ipv6.NextICMPv6:
		i.icmp6Input(now, res, linkMcast)
		freeMbuf(m)
	case ipv6.NextUDP:
		i.udp6Input(now, res, m, linkMcast)
	default:
		h := i.handlers[res.Proto]
		if h == nil {
			// RFC 8200 section 4: an unrecognised Next Header gets
			// Parameter Problem code 1 pointing at it.
			i.v6.stats.IPv6.InUnknownProtos++
			i.sendError6(now, icmpv6.ErrorRequest{Type: icmpv6.TypeParamProblem, Code: icmpv6.CodeUnknownNextHeader,
				Param: uint32(res.ProtoPointer), Invoking: p, LinkMulticast: linkMcast, Local: i.local6()})
			freeMbuf(m)
			return
		}
		seg := res.Payload()
		if res.Proto == ipv6.NextTCP && !i.tcpChecksumOK6(p, seg, m) {
			i.stats.TCP.InCsumErrors++
			freeMbuf(m)
			return
		}
		if res.Proto == ipv6.NextTCP {
			i.stats.TCP.InSegs++
		}
		h.HandleSegment(now, Segment{
			V6: true, Src6: p.Src(), Dst6: p.Dst(), Protocol: ipv4.Protocol(res.Proto),
			TOS: p.TrafficClass(), TTL: p.HopLimit(), FlowLabel: p.FlowLabel(),
			Broadcast: linkMcast || p.Dst().IsMulticast(),
			IP6:       p, Payload: seg, Mbuf: m,
		})
		freeMbuf(m)
	}
}

// tcpChecksumOK6 checks a TCP segment over IPv6: the NIC's verdict when
// it gives one, else in software over RFC 8200 section 8.1's
// pseudo-header.
func (i *Interface) tcpChecksumOK6(p ipv6.Packet, seg []byte, m *hw.Mbuf) bool {
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
	return tcp.VerifyChecksum(seg, ipv6.PseudoHeaderSum(p.Src(), p.Dst(), len(seg), ipv6.NextTCP))
}

// icmp6Input handles one ICMPv6 message: Neighbor Discovery and MLD go
// to the node, echo requests are answered, echo replies go to the echo
// handler, Packet Too Big lowers the path MTU, errors go to the
// transport they quote (RFC 4443 section 2.4 (a)).
func (i *Interface) icmp6Input(now time.Duration, res ipv6.Result, linkMcast bool) {
	v := i.v6
	st := &v.stats.ICMPv6
	st.InMsgs++
	p := res.Packet
	msg := res.Payload()
	src, dst := p.Src(), p.Dst()
	if len(msg) < 1 {
		st.CountError(icmpv6.ErrTruncated)
		return
	}
	i.charge(hw.CostChecksumByte, int64(len(msg)))
	switch t := icmpv6.Type(msg[0]); t {
	case icmpv6.TypeMLDQuery, icmpv6.TypeMLDReport, icmpv6.TypeMLDDone, icmpv6.TypeRouterSolicitation,
		icmpv6.TypeRouterAdvertisement, icmpv6.TypeNeighborSolicitation, icmpv6.TypeNeighborAdvertisement,
		icmpv6.TypeRedirect, icmpv6.TypeMLDv2Report:
		// The node validates (checksum, hop limit, code ...) and counts.
		st.CountIn(t)
		v.node.Input(now, ndp.IPInfo{Src: src, Dst: dst, HopLimit: p.HopLimit(), RouterAlert: routerAlert(p)}, msg, i.ndpSink())
		return
	}
	r, err := icmpv6.Parse(msg, src, dst, true)
	if err != nil {
		st.CountError(err)
		return
	}
	st.CountIn(r.Type)
	switch r.Type {
	case icmpv6.TypeEchoRequest:
		h, _ := ipv6.Parse(p)
		if n := icmpv6.EchoReply(v.cfg.Echo, h, r, i.local6(), i.hopLimit6(), v.buf, st); n > 0 {
			if err := i.sendPacket6(now, v.buf[:n]); err != nil {
				st.OutDropped++
			}
		}
	case icmpv6.TypeEchoReply:
		if v.onEcho != nil {
			v.onEcho(now, src, r.Ident, r.Seq, r.Data)
		}
	case icmpv6.TypePacketTooBig:
		if q, err := icmpv6.Invoking(r.Data); err == nil && i.IsAssigned6(q.Src()) {
			// RFC 8201 section 4: lower the estimate for the quoted
			// destination (never below 1280, never up).
			if v.pmtu.PacketTooBig(now, q.Dst(), r.MTU) == ipv6.PMTULowered {
				i.pathMTULowered(now, q.Dst())
			}
		}
		i.icmp6ErrorInput(now, src, r)
	default:
		if r.Type.IsError() {
			i.icmp6ErrorInput(now, src, r)
		}
	}
}

// routerAlert reports whether p's hop-by-hop options header, if it has
// one right after the fixed header, carries a Router Alert option with
// value 0 (MLD, RFC 2711), which MLD queries need (RFC 3810 section 6.2).
func routerAlert(p ipv6.Packet) bool {
	if p.NextHeader() != ipv6.NextHopByHop || len(p) < ipv6.HeaderLen+8 {
		return false
	}
	h := p[ipv6.HeaderLen:]
	end := min(8*(int(h[1])+1), len(h))
	for k := 2; k < end; {
		switch h[k] {
		case ipv6.OptPad1:
			k++
			continue
		case ipv6.OptRouterAlert:
			if k+4 <= end && h[k+1] == 2 && h[k+2] == 0 && h[k+3] == 0 {
				return true
			}
		}
		if k+1 >= end {
			return false
		}
		k += 2 + int(h[k+1])
	}
	return false
}

// icmp6ErrorInput hands an ICMPv6 error to the transport whose packet
// it quotes.
func (i *Interface) icmp6ErrorInput(now time.Duration, from ipv6.Addr, r icmpv6.Repr) {
	q, err := icmpv6.Invoking(r.Data)
	if err != nil {
		return
	}
	i.errorToTransport6(now, ICMPv6Error{From: from, Type: uint8(r.Type), Code: r.Code, MTU: r.MTU, Pointer: r.Pointer, Quoted: q})
}

// errorToTransport6 delivers e to the transport of the packet it quotes
// (ours only: a quote whose source is not one of our addresses is not
// about us).
func (i *Interface) errorToTransport6(now time.Duration, e ICMPv6Error) {
	q := e.Quoted
	if !i.IsAssigned6(q.Src()) && q.Src() != i.v6.ll {
		return
	}
	proto, off, ok := ipv6.UpperLayer(q)
	if !ok {
		return
	}
	switch proto {
	case ipv6.NextUDP:
		if off+4 > len(q) {
			return
		}
		i.stats.UDP.InICMPErrors++
		if s := i.udp[binary.BigEndian.Uint16(q[off:])]; s != nil {
			s.stats.ICMPErrors++
		}
	default:
		if eh, ok := i.handlers[proto].(ErrorHandler6); ok {
			if proto == ipv6.NextTCP {
				i.stats.TCP.InICMPErrors++
			}
			eh.HandleICMPv6Error(now, e)
		}
	}
}

// udp6Input validates a UDP datagram over IPv6 and queues it on its
// socket, or answers port unreachable (RFC 4443 section 3.1, code 4).
// The checksum is mandatory over IPv6 (RFC 8200 section 8.1): a zero
// one is an error.
func (i *Interface) udp6Input(now time.Duration, res ipv6.Result, m *hw.Mbuf, linkMcast bool) {
	st := &i.stats.UDP
	i.charge(CostUDPRx, 1)
	p, b := res.Packet, res.Payload()
	bad := func(c *uint64) {
		st.InErrors++
		*c++
		freeMbuf(m)
	}
	if len(b) < 8 {
		bad(&st.InTruncated)
		return
	}
	l := int(binary.BigEndian.Uint16(b[4:]))
	if l < 8 || l > len(b) {
		bad(&st.InBadLength)
		return
	}
	b = b[:l]
	verify := true
	if m != nil {
		if m.Flags&hw.RxL4ChecksumBad != 0 {
			bad(&st.InCsumErrors)
			return
		}
		if m.Flags&hw.RxL4ChecksumGood != 0 {
			verify = false
			st.InCsumOffload++
		}
	}
	if verify {
		i.charge(hw.CostChecksumByte, int64(l))
		if binary.BigEndian.Uint16(b[6:]) == 0 ||
			checksum.Finish(checksum.Add(ipv6.PseudoHeaderSum(p.Src(), p.Dst(), l, ipv6.NextUDP), b)) != 0 {
			bad(&st.InCsumErrors)
			return
		}
	}
	sport, dport := binary.BigEndian.Uint16(b), binary.BigEndian.Uint16(b[2:])
	s := i.udp[dport]
	if s == nil {
		if linkMcast || p.Dst().IsMulticast() {
			st.IgnoredMulti++
		} else {
			st.NoPorts++
			i.sendError6(now, icmpv6.ErrorRequest{Type: icmpv6.TypeDestUnreach, Code: icmpv6.CodePortUnreach,
				Invoking: p, LinkMulticast: linkMcast, Local: i.local6()})
		}
		freeMbuf(m)
		return
	}
	if s.n == len(s.queue) {
		st.InErrors++
		st.RcvbufErrors++
		s.stats.Dropped++
		freeMbuf(m)
		return
	}
	data := b[8:]
	if m == nil {
		data = append([]byte(nil), data...)
		st.InCopied++
	}
	s.queue[(s.head+s.n)%len(s.queue)] = udpEntry{m: m, data: data, v6: true, from6: UDPAddr6{IP: p.Src(), Port: sport}}
	s.n++
	s.stats.Received++
	st.InDatagrams++
}
