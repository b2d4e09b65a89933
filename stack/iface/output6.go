package iface

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// OutputOptions6 are per-packet IPv6 output settings.
type OutputOptions6 struct {
	// TrafficClass is the traffic class octet (DSCP and ECN).
	TrafficClass uint8
	// HopLimit overrides the interface's when non-zero.
	HopLimit uint8
	// FlowLabel is the 20-bit flow label (RFC 6437; FlowLabel6 gives a
	// connection's).
	FlowLabel uint32
	// DontFrag refuses a packet larger than the path MTU with
	// ErrMessageTooLong (IPV6_DONTFRAG, RFC 3542 section 11.2) instead
	// of fragmenting it at the source (RFC 8200 section 5).
	DontFrag bool
	// Checksum says whether the interface fills the transport checksum.
	Checksum Checksum
	// Src is the source address; zero picks one (the link-local address
	// for a link-local or multicast destination, the static one else).
	Src ipv6.Addr
}

// AllocTransport6 returns an empty mbuf whose headroom holds at least
// HeaderRoom6 bytes, for OutputIPv6; nil (tx.no_mbuf) when the pool is
// empty.
func (i *Interface) AllocTransport6() *hw.Mbuf { return i.allocWithHeadroom(HeaderRoom6) }

// local6 is the address errors and echo replies come from when the
// packet they answer was not to one of our unicast addresses (RFC 4443
// section 2.2).
func (i *Interface) local6() ipv6.Addr {
	if i.v6.node.IsAssigned(i.v6.addr) {
		return i.v6.addr
	}
	return i.v6.ll
}

// hopLimit6 is the hop limit we send with: a Router Advertisement's Cur
// Hop Limit, else the configured one (RFC 4861 section 6.3.4).
func (i *Interface) hopLimit6() uint8 {
	if h := i.v6.node.CurHopLimit(); h != 0 {
		return h
	}
	return uint8(i.v6.cfg.HopLimit)
}

// source6 picks the source for dst (a reduced RFC 6724 section 5: the
// same scope first): the link-local address for link-local and
// link-scoped multicast destinations, the static address otherwise. It
// must be assigned (past DAD).
func (i *Interface) source6(dst, want ipv6.Addr) (ipv6.Addr, error) {
	v := i.v6
	src := want
	if src == (ipv6.Addr{}) {
		src = v.addr
		if dst.IsLinkLocal() || (dst.IsMulticast() && dst[1]&0x0f <= 2) {
			src = v.ll
		}
	}
	if !v.node.IsAssigned(src) {
		v.stats.Out.NoSource++
		return src, ErrNoSource
	}
	return src, nil
}

// route6 finds the next hop for dst (RFC 4861 section 5.2).
func (i *Interface) route6(now time.Duration, dst ipv6.Addr) (ipv6.Addr, error) {
	v := i.v6
	// The last destination's Path first: it is filled only below, after
	// the checks (v.addr and v.ll are fixed when the interface is made),
	// so a dst it holds needs neither the checks nor NextHopPath's call.
	if next, ok := v.node.CachedNextHop(&v.path, dst); ok {
		return next, nil
	}
	if dst.IsUnspecified() || dst.IsLoopback() || dst == v.addr || dst == v.ll {
		v.stats.Out.BadAddress++
		i.stats.Tx.BadAddress++
		return dst, ErrBadAddress
	}
	next, ok := v.node.NextHopPath(now, &v.path, dst)
	if !ok {
		v.stats.Out.NoRoutes++
		return dst, ErrNoRoute
	}
	return next, nil
}

// OutputIPv6 sends the transport bytes in m (from DataOff) to dst as
// upper-layer protocol proto: it picks the source, finds the next hop,
// fills the transport checksum if opts.Checksum asks (through the NIC's
// offload when the link has it: the field then holds the pseudo-header
// sum, DPDK's rte_ipv6_phdr_cksum convention), prepends the IPv6 and
// Ethernet headers (HeaderRoom6 bytes of headroom: AllocTransport6),
// fragments at the source when the packet exceeds the path MTU (RFC
// 8200 section 5) unless opts.DontFrag, resolves the next hop with
// Neighbor Discovery and transmits. It always takes ownership of m.
func (i *Interface) OutputIPv6(now time.Duration, m *hw.Mbuf, dst ipv6.Addr, proto uint8, opts OutputOptions6) error {
	if i.v6 == nil {
		m.Free()
		i.stats.Tx.BadAddress++
		return ErrBadAddress
	}
	return i.output6(now, m, dst, proto, opts, false)
}

// output6 is OutputIPv6 on an interface with IPv6. srcChecked says the
// caller (SegmentSender, for every TCP segment) has just found opts.Src
// assigned, so that source6 need not look it up a second time: nothing
// between the two checks changes an address's state.
func (i *Interface) output6(now time.Duration, m *hw.Mbuf, dst ipv6.Addr, proto uint8, opts OutputOptions6, srcChecked bool) error {
	v := i.v6
	v.stats.Out.Requests++
	i.charge(CostIPTx, 1)
	if proto == ipv6.NextTCP {
		i.stats.TCP.OutSegs++
	}
	if err := i.check6(m); err != nil {
		return err
	}
	src, next, err := i.prepare6(now, dst, opts, srcChecked)
	if err != nil {
		m.Free()
		return err
	}
	seg := m.Data()
	if len(seg) > ipv6.MaxPayloadLen {
		v.stats.Out.TooBig++
		m.Free()
		return ErrMessageTooLong
	}
	r := ipv6.Repr{Src: src, Dst: dst, NextHeader: proto, PayloadLen: len(seg),
		HopLimit: i.hop6(opts), TrafficClass: opts.TrafficClass, FlowLabel: opts.FlowLabel}
	if mtu := i.PathMTU6(now, dst); ipv6.HeaderLen+len(seg) > mtu {
		err := i.fragmentOrRefuse6(now, r, seg, next, mtu, proto, opts)
		m.Free()
		return err
	}
	if m.Headroom() < HeaderRoom6 {
		i.stats.Tx.NoHeadroom++
		v.stats.Out.Discards++
		m.Free()
		return ErrNoHeadroom
	}
	m.Flags = 0
	m.L2Len, m.L3Len = ether.HeaderLen, ipv6.HeaderLen
	i.l4Checksum6(m, seg, src, dst, proto, opts.Checksum)
	h, _ := m.Prepend(ipv6.HeaderLen)
	r.Emit(ipv6.Packet(h))
	return i.sendFrame6(now, m, next)
}

// check6 refuses what the IPv6 output cannot send at all.
func (i *Interface) check6(m *hw.Mbuf) error {
	v := i.v6
	switch {
	case v.disabled:
		v.stats.Out.Disabled++
		m.Free()
		return ErrNoSource
	case m.Next != nil:
		i.stats.Tx.Chained++
		v.stats.Out.Discards++
		m.Free()
		return ErrChained
	}
	return nil
}

// prepare6 picks the source (opts.Src as it is when srcChecked: see
// output6) and the next hop.
func (i *Interface) prepare6(now time.Duration, dst ipv6.Addr, opts OutputOptions6, srcChecked bool) (src, next ipv6.Addr, err error) {
	if srcChecked && opts.Src != (ipv6.Addr{}) {
		src = opts.Src
	} else if src, err = i.source6(dst, opts.Src); err != nil {
		return src, dst, err
	}
	next, err = i.route6(now, dst)
	return src, next, err
}

func (i *Interface) hop6(opts OutputOptions6) uint8 {
	if opts.HopLimit != 0 {
		return opts.HopLimit
	}
	return i.hopLimit6()
}

// fragmentOrRefuse6 sends a packet larger than the path MTU as
// fragments, or refuses it with DontFrag.
func (i *Interface) fragmentOrRefuse6(now time.Duration, r ipv6.Repr, seg []byte, next ipv6.Addr, mtu int, proto uint8, opts OutputOptions6) error {
	v := i.v6
	if opts.DontFrag {
		v.stats.Out.TooBig++
		return ErrMessageTooLong
	}
	i.softL4Checksum6(seg, r.Src, r.Dst, proto, opts.Checksum)
	return i.fragment6(now, r, seg, next, mtu)
}

// l4Checksum6 fills the transport checksum of an unfragmented segment,
// leaving it to the NIC when the link offloads that protocol.
func (i *Interface) l4Checksum6(m *hw.Mbuf, seg []byte, src, dst ipv6.Addr, proto uint8, c Checksum) {
	if c == ChecksumNone || len(seg) < c.headerLen() {
		return
	}
	var flag hw.OffloadFlags
	switch {
	case c == ChecksumTCP && i.txOff&hw.TxOffloadTCPChecksum != 0:
		flag = hw.TxTCPChecksum
		i.stats.TCP.OutCsumOffload++
	case c == ChecksumUDP && i.txOff&hw.TxOffloadUDPChecksum != 0:
		flag = hw.TxUDPChecksum
	}
	if flag == 0 {
		i.softL4Checksum6(seg, src, dst, proto, c)
		return
	}
	m.Flags |= flag
	c.fillPseudo(seg, ipv6.PseudoHeaderSum(src, dst, len(seg), proto))
}

// softL4Checksum6 fills the transport checksum in software (RFC 8200
// section 8.1's pseudo-header).
func (i *Interface) softL4Checksum6(seg []byte, src, dst ipv6.Addr, proto uint8, c Checksum) {
	if c == ChecksumNone || len(seg) < c.headerLen() {
		return
	}
	i.charge(hw.CostChecksumByte, int64(len(seg)))
	c.fill(seg, ipv6.PseudoHeaderSum(src, dst, len(seg), proto))
}

// fragment6 sends payload with header r as fragments that fit mtu (RFC
// 8200 section 4.5), each in an mbuf of its own.
func (i *Interface) fragment6(now time.Duration, r ipv6.Repr, payload []byte, next ipv6.Addr, mtu int) error {
	v := i.v6
	st := &v.stats.IPv6
	st.OutFragReqds++
	v.fragID++
	fr, err := ipv6.NewFragments(r, payload, mtu, v.fragID)
	if err != nil {
		st.OutFragFails++
		return ErrMessageTooLong
	}
	for k := 0; k < fr.Len(); k++ {
		m := i.link.Alloc()
		if m == nil {
			i.stats.Tx.NoMbuf++
			st.OutFragFails++
			return ErrNoMbuf
		}
		n := fr.FragmentLen(k)
		if m.Headroom() < ether.HeaderLen || m.Tailroom() < n {
			i.stats.Tx.NoMbuf++
			st.OutFragFails++
			m.Free()
			return ErrNoMbuf
		}
		b, _ := m.Append(n)
		fr.Emit(k, b)
		i.charge(hw.CostCopyByte, int64(n))
		m.L2Len, m.L3Len = ether.HeaderLen, ipv6.HeaderLen
		if fr.Fragmented() {
			st.OutFragCreates++
		}
		if err := i.sendFrame6(now, m, next); err != nil {
			return err
		}
	}
	if fr.Fragmented() {
		st.OutFragOKs++
	}
	return nil
}

// sendFrame6 prepends the Ethernet header to the IPv6 packet in m and
// sends it to next's MAC, resolving it with Neighbor Discovery first
// (the node may queue m). It owns m.
func (i *Interface) sendFrame6(now time.Duration, m *hw.Mbuf, next ipv6.Addr) error {
	h, err := m.Prepend(ether.HeaderLen)
	if err != nil {
		i.stats.Tx.NoHeadroom++
		i.v6.stats.Out.Discards++
		m.Free()
		return ErrNoHeadroom
	}
	f := ether.Frame(h)
	f.SetSrc(i.mac)
	f.SetEtherType(ether.TypeIPv6)
	if mac, ok := i.v6.node.ResolvePath(now, &i.v6.path, next, m, i.ndpSink()); ok {
		f.SetDst(mac)
		i.transmit(m)
	}
	return nil
}

// sendPacket6 sends a whole IPv6 packet built outside any mbuf (an
// ICMPv6 error or echo reply): copied, or fragmented when larger than
// the path MTU.
func (i *Interface) sendPacket6(now time.Duration, pkt []byte) error {
	v := i.v6
	r, err := ipv6.Parse(ipv6.Packet(pkt))
	if err != nil {
		return ErrBadAddress
	}
	v.stats.Out.Requests++
	i.charge(CostIPTx, 1)
	next, err := i.route6(now, r.Dst)
	if err != nil {
		return err
	}
	if mtu := i.PathMTU6(now, r.Dst); len(pkt) > mtu {
		return i.fragment6(now, r, pkt[ipv6.HeaderLen:], next, mtu)
	}
	m := i.AllocTransport6()
	if m == nil {
		v.stats.Out.Discards++
		return ErrNoMbuf
	}
	m.DataOff -= ipv6.HeaderLen
	b, err := m.Append(len(pkt))
	if err != nil {
		v.stats.Out.Discards++
		m.Free()
		return ErrNoMbuf
	}
	copy(b, pkt)
	i.charge(hw.CostCopyByte, int64(len(pkt)))
	m.L2Len, m.L3Len = ether.HeaderLen, ipv6.HeaderLen
	return i.sendFrame6(now, m, next)
}

// sendError6 builds and sends an ICMPv6 error under RFC 4443 section
// 2.4's rules and rate limit (every outcome counted in icmpv6).
func (i *Interface) sendError6(now time.Duration, req icmpv6.ErrorRequest) {
	v := i.v6
	if req.Local == (ipv6.Addr{}) {
		req.Local = i.local6()
	}
	if req.HopLimit == 0 {
		req.HopLimit = i.hopLimit6()
	}
	n, _ := v.errs.Build(now, req, v.buf)
	if n == 0 {
		return
	}
	if err := i.sendPacket6(now, v.buf[:n]); err != nil {
		v.stats.ICMPv6.OutDropped++
	}
}

// SendEcho6 sends an ICMPv6 echo request (ping -6) to dst.
func (i *Interface) SendEcho6(now time.Duration, dst ipv6.Addr, ident, seq uint16, data []byte) error {
	v := i.v6
	if v == nil {
		return ErrBadAddress
	}
	src, err := i.source6(dst, ipv6.Addr{})
	if err != nil {
		return err
	}
	r := icmpv6.Repr{Type: icmpv6.TypeEchoRequest, Ident: ident, Seq: seq, Data: data}
	n := r.BufferLen()
	if ipv6.HeaderLen+n > len(v.buf) {
		return ErrMessageTooLong
	}
	ipv6.Repr{Src: src, Dst: dst, NextHeader: ipv6.NextICMPv6, PayloadLen: n, HopLimit: i.hopLimit6()}.Emit(ipv6.Packet(v.buf))
	r.Emit(v.buf[ipv6.HeaderLen:], src, dst)
	v.stats.ICMPv6.CountOut(icmpv6.TypeEchoRequest)
	return i.sendPacket6(now, v.buf[:ipv6.HeaderLen+n])
}

// SendIPv6 is the copying counterpart of OutputIPv6: payload (not kept
// or modified) is copied into one mbuf, or fragmented from a scratch
// copy when it does not fit the path MTU.
func (i *Interface) SendIPv6(now time.Duration, dst ipv6.Addr, proto uint8, payload []byte, opts OutputOptions6) error {
	v := i.v6
	if v == nil {
		return ErrBadAddress
	}
	if len(payload) > len(i.scratch) || len(payload) > ipv6.MaxPayloadLen {
		v.stats.Out.Requests++
		v.stats.Out.TooBig++
		return ErrMessageTooLong
	}
	b := i.scratch[:len(payload)]
	copy(b, payload)
	if ipv6.HeaderLen+len(b) <= i.PathMTU6(now, dst) {
		if m := i.AllocTransport6(); m != nil {
			if seg, err := m.Append(len(b)); err == nil {
				copy(seg, b)
				i.charge(hw.CostCopyByte, int64(len(b)))
				return i.OutputIPv6(now, m, dst, proto, opts)
			}
			m.Free()
		} else {
			v.stats.Out.Requests++
			v.stats.Out.Discards++
			return ErrNoMbuf
		}
	}
	v.stats.Out.Requests++
	i.charge(CostIPTx, 1)
	if v.disabled {
		v.stats.Out.Disabled++
		return ErrNoSource
	}
	src, next, err := i.prepare6(now, dst, opts, false)
	if err != nil {
		return err
	}
	r := ipv6.Repr{Src: src, Dst: dst, NextHeader: proto, PayloadLen: len(b),
		HopLimit: i.hop6(opts), TrafficClass: opts.TrafficClass, FlowLabel: opts.FlowLabel}
	return i.fragmentOrRefuse6(now, r, b, next, i.PathMTU6(now, dst), proto, opts)
}
