package iface

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/udp"
)

// icmpInput handles one ICMP message: echo requests are answered, echo
// replies go to the echo handler, errors go to the transport they quote.
// ICMP has no receive checksum offload in DPDK, so it is always verified
// here.
func (i *Interface) icmpInput(now time.Duration, p ipv4.Packet, r ipv4.Repr, b []byte, meta rxMeta) {
	st := &i.stats.ICMP
	st.InMsgs++
	i.charge(hw.CostChecksumByte, int64(len(b)))
	msg, err := icmp.Parse(icmp.Packet(b), true)
	if err != nil {
		st.CountError(err)
		freeMbuf(meta.m)
		return
	}
	st.CountIn(msg.Type)
	switch msg.Type {
	case icmp.TypeEchoRequest:
		if meta.ipBroadcast || meta.linkBroadcast {
			// RFC 1122 section 3.2.2.6: an echo to a broadcast MAY be
			// discarded; answering amplifies (smurf attacks).
			st.InEchosIgnored++
			freeMbuf(meta.m)
			return
		}
		i.echoReply(now, p, r, b, meta.m)
	case icmp.TypeEchoReply:
		if i.onEcho != nil {
			i.onEcho(now, r.Src, msg.Ident, msg.Seq, msg.Data)
		}
		freeMbuf(meta.m)
	default:
		if msg.Type.IsError() {
			i.icmpErrorInput(now, r.Src, msg)
		}
		freeMbuf(meta.m)
	}
}

// echoReply answers an echo request (RFC 792) with the same identifier,
// sequence number and data. When the request sits in an mbuf with a
// plain header, the reply is built in place: the ICMP type changes, the
// checksum is updated incrementally (RFC 1624) and the headers are
// rebuilt in the headroom, so no byte of data is copied.
func (i *Interface) echoReply(now time.Duration, p ipv4.Packet, r ipv4.Repr, b []byte, m *hw.Mbuf) {
	st := &i.stats.ICMP
	if m != nil && r.HeaderLen == ipv4.MinHeaderLen {
		q := icmp.Packet(b)
		old := uint16(q.Type())<<8 | uint16(q.Code())
		q.SetType(icmp.TypeEchoReply)
		q.SetChecksum(checksum.Update(q.Checksum(), old, uint16(icmp.TypeEchoReply)<<8|uint16(q.Code())))
		// Keep only the ICMP message in the mbuf: drop the headers in
		// front and any Ethernet padding behind.
		front := ether.HeaderLen + r.HeaderLen
		_ = m.Trim(m.DataLen - front - len(b))
		_ = m.Adj(front)
		if err := i.OutputIPv4(now, m, r.Src, ipv4.ProtoICMP, OutputOptions{TOS: r.TOS}); err != nil {
			st.OutDropped++
			return
		}
		st.CountOut(icmp.TypeEchoReply)
		return
	}
	// Reassembled or with options: copy into the scratch buffer.
	out := i.scratch[:len(b)]
	copy(out, b)
	q := icmp.Packet(out)
	q.SetType(icmp.TypeEchoReply)
	q.FillChecksum()
	freeMbuf(m)
	if err := i.sendBytes(now, out, r.Src, ipv4.ProtoICMP, OutputOptions{TOS: r.TOS}); err != nil {
		st.OutDropped++
		return
	}
	st.CountOut(icmp.TypeEchoReply)
}

// icmpErrorInput hands an error to the transport whose datagram it
// quotes (RFC 1122 section 3.2.2: "MUST be passed to the transport
// layer").
func (i *Interface) icmpErrorInput(now time.Duration, from [4]byte, msg icmp.Repr) {
	q, err := icmp.Quoted(msg.Data)
	if err != nil {
		return // Parse checked it already
	}
	if q.Src() != i.ip {
		return // not about a datagram of ours
	}
	e := ICMPError{From: from, Type: uint8(msg.Type), Code: msg.Code, MTU: msg.MTU, Quoted: q}
	switch q.Protocol() {
	case ipv4.ProtoUDP:
		i.stats.UDP.InICMPErrors++
		i.stats.ICMP.InErrorsDelivered++
		// Quoted checked that the quote holds the header and the first
		// icmp.QuoteLen bytes after it: a whole UDP header.
		if s := i.udp[udp.Packet(q[q.HeaderLen():]).SrcPort()]; s != nil {
			s.stats.ICMPErrors++
		}
	default:
		if h, ok := i.handlers[q.Protocol()].(ErrorHandler); ok {
			if q.Protocol() == ipv4.ProtoTCP {
				i.stats.TCP.InICMPErrors++
			}
			i.stats.ICMP.InErrorsDelivered++
			h.HandleICMPError(now, e)
		}
	}
}

// SendICMPError sends an ICMP error of type typ and code about the
// datagram orig (a checked IPv4 packet received by this interface), with
// arg the next-hop MTU for fragmentation needed or the pointer for
// parameter problem. It applies RFC 1122 section 3.2.2 (no error about an
// error, a broadcast, a non-initial fragment or a bad source) and the
// rate limit; what is not sent is counted by reason. linkBroadcast says
// orig arrived in a link-layer broadcast frame.
func (i *Interface) SendICMPError(now time.Duration, orig ipv4.Packet, linkBroadcast bool, typ, code uint8, arg uint16) {
	i.sendError(now, orig, linkBroadcast, typ, code, arg)
}

func (i *Interface) sendError(now time.Duration, orig ipv4.Packet, linkBroadcast bool, typ, code uint8, arg uint16) {
	st := &i.stats.ICMP
	if len(orig) < ipv4.MinHeaderLen || orig.HeaderLen() < ipv4.MinHeaderLen || orig.HeaderLen() > len(orig) {
		return
	}
	if why := icmp.ErrorAllowed(orig, linkBroadcast, i.isBroadcast(orig.Dst())); why != icmp.Allowed {
		st.CountSuppress(why)
		return
	}
	if !i.limiter.Allow(now) {
		st.OutRateLimited++
		return
	}
	quote := icmp.QuoteOf(orig)
	m := i.AllocTransport()
	if m == nil {
		st.OutDropped++
		return
	}
	b, err := m.Append(icmp.ErrorLen(quote))
	if err != nil {
		i.stats.Tx.NoMbuf++
		st.OutDropped++
		m.Free()
		return
	}
	icmp.EmitError(icmp.Packet(b), icmp.Type(typ), code, arg, quote)
	if err := i.OutputIPv4(now, m, orig.Src(), ipv4.ProtoICMP, OutputOptions{}); err != nil {
		st.OutDropped++
		return
	}
	st.CountOut(icmp.Type(typ))
}

// SendEcho sends an echo request (ping) to dst; replies reach the
// EchoHandler.
func (i *Interface) SendEcho(now time.Duration, dst [4]byte, ident, seq uint16, data []byte) error {
	n := icmp.HeaderLen + len(data)
	if n > len(i.scratch)-ipv4.MinHeaderLen {
		return ErrMessageTooLong
	}
	out := i.scratch[:n]
	icmp.Repr{Type: icmp.TypeEchoRequest, Ident: ident, Seq: seq, Data: data}.Emit(icmp.Packet(out))
	if err := i.sendBytes(now, out, dst, ipv4.ProtoICMP, OutputOptions{}); err != nil {
		i.stats.ICMP.OutDropped++
		return err
	}
	i.stats.ICMP.CountOut(icmp.TypeEchoRequest)
	return nil
}
