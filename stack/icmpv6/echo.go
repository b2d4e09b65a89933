package icmpv6

import "github.com/savanna-sim/savanna/stack/ipv6"

// EchoConfig says which echo requests are answered.
type EchoConfig struct {
	// IgnoreMulticast leaves requests to multicast groups unanswered
	// (Linux's net.ipv6.icmp.echo_ignore_multicast, default off: RFC 4443
	// section 4.2 says a reply SHOULD be sent).
	IgnoreMulticast bool `yaml:"ignore_multicast"`
	// IgnoreAll answers none (net.ipv6.icmp.echo_ignore_all).
	IgnoreAll bool `yaml:"ignore_all"`
}

// EchoReplyLen returns the length of the IPv6 packet answering req.
func EchoReplyLen(req Repr) int { return ipv6.HeaderLen + MinLen + len(req.Data) }

// EchoReply answers the echo request req, received in the IPv6 packet
// with header h, by writing the reply packet into out (at least
// EchoReplyLen(req) bytes); it returns the length, or 0 if the request is
// not answered (counted in InEchosIgnored) under RFC 4443 section 4.2:
// the reply carries the identifier, sequence number and data unchanged,
// goes to the request's source, from its destination when that is a
// unicast address of ours and from local, a unicast address of the
// interface, when it was a multicast group. The traffic class is
// reflected, as Linux's icmpv6_echo_reply does. stats may be nil.
func EchoReply(cfg EchoConfig, h ipv6.Repr, req Repr, local ipv6.Addr, hopLimit uint8, out []byte, stats *Stats) int {
	if stats == nil {
		stats = &Stats{}
	}
	if req.Type != TypeEchoRequest || cfg.IgnoreAll || (cfg.IgnoreMulticast && h.Dst.IsMulticast()) ||
		h.Src.IsUnspecified() || h.Src.IsMulticast() {
		stats.InEchosIgnored++
		return 0
	}
	src := h.Dst
	if src.IsMulticast() {
		src = local
	}
	if hopLimit == 0 {
		hopLimit = ipv6.DefaultHopLimit
	}
	r := Repr{Type: TypeEchoReply, Ident: req.Ident, Seq: req.Seq, Data: req.Data}
	oh := ipv6.Repr{Src: src, Dst: h.Src, NextHeader: NextHeader, PayloadLen: r.BufferLen(),
		HopLimit: hopLimit, TrafficClass: h.TrafficClass}
	oh.Emit(ipv6.Packet(out))
	r.Emit(out[ipv6.HeaderLen:], src, h.Src)
	stats.CountOut(TypeEchoReply)
	return ipv6.HeaderLen + r.BufferLen()
}
