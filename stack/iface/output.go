package iface

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// AllocTransport returns an empty mbuf whose headroom holds at least
// HeaderRoom bytes, for a transport to append its header and data to and
// pass to OutputIPv4; nil (counted in tx.no_mbuf) when the pool is empty.
func (i *Interface) AllocTransport() *hw.Mbuf { return i.allocWithHeadroom(HeaderRoom) }

// allocWithHeadroom returns an empty mbuf with at least room bytes of
// headroom for the headers below a transport's; nil when the pool is
// empty (tx.no_mbuf) or its buffers are too small (tx.no_headroom).
func (i *Interface) allocWithHeadroom(room int) *hw.Mbuf {
	m := i.link.Alloc()
	if m == nil {
		i.stats.Tx.NoMbuf++
		return nil
	}
	if m.Headroom() < room {
		if len(m.Buf) < room {
			i.stats.Tx.NoHeadroom++
			m.Free()
			return nil
		}
		m.DataOff = room
	}
	return m
}

// route picks the next hop for dst: dst itself on the link, the gateway
// otherwise. broadcast says the frame goes to the Ethernet broadcast
// address without ARP.
func (i *Interface) route(dst [4]byte) (next [4]byte, broadcast bool, err error) {
	switch {
	case !i.has4:
		return dst, false, ErrNoRoute
	case i.isBroadcast(dst):
		return dst, true, nil
	case ipv4.IsUnspecified(dst) || ipv4.IsMulticast(dst) || ipv4.IsLoopback(dst) || ipv4.IsReserved(dst):
		return dst, false, ErrBadAddress
	case dst == i.ip:
		return dst, false, ErrNoRoute
	case ipv4.SameSubnet(dst, i.ip, i.mask):
		return dst, false, nil
	case i.hasGW:
		return i.gw, false, nil
	}
	return dst, false, ErrNoRoute
}

// routeFail counts a routing failure.
func (i *Interface) routeFail(err error) {
	if err == ErrBadAddress {
		i.stats.Tx.BadAddress++
		i.stats.IP.OutDiscards++
		return
	}
	i.stats.IP.OutNoRoutes++
}

// OutputIPv4 sends the transport bytes in m (its data, from DataOff) to
// dst as protocol proto. It prepends the IPv4 and Ethernet headers in the
// headroom (HeaderRoom bytes are needed: use AllocTransport), fills the
// transport checksum if opts.Checksum asks (through the NIC's offload
// when the link has it), fragments datagrams larger than the MTU unless
// opts.DontFrag, resolves the next hop with ARP and transmits. It always
// takes ownership of m; a nil error means sent or queued for ARP.
func (i *Interface) OutputIPv4(now time.Duration, m *hw.Mbuf, dst [4]byte, proto ipv4.Protocol, opts OutputOptions) error {
	st := &i.stats.IP
	st.OutRequests++
	i.charge(CostIPTx, 1)
	if proto == ipv4.ProtoTCP {
		i.stats.TCP.OutSegs++
	}
	if m.Next != nil {
		i.stats.Tx.Chained++
		st.OutDiscards++
		m.Free()
		return ErrChained
	}
	next, bcast, err := i.route(dst)
	if err != nil {
		i.routeFail(err)
		m.Free()
		return err
	}
	seg := m.Data()
	if ipv4.MinHeaderLen+len(seg) > ipv4.MaxDatagramLen {
		st.OutDiscards++
		m.Free()
		return ErrMessageTooLong
	}
	if ipv4.MinHeaderLen+len(seg) > i.mtu {
		if opts.DontFrag {
			st.FragFails++
			st.FragFailsDF++
			m.Free()
			return ErrMessageTooLong
		}
		i.softL4Checksum(seg, dst, proto, opts.Checksum)
		err := i.fragment(now, seg, dst, next, bcast, proto, opts)
		m.Free()
		return err
	}
	if m.Headroom() < HeaderRoom {
		i.stats.Tx.NoHeadroom++
		st.OutDiscards++
		m.Free()
		return ErrNoHeadroom
	}
	m.Flags = 0
	m.L2Len, m.L3Len = ether.HeaderLen, ipv4.MinHeaderLen
	i.l4Checksum(m, seg, dst, proto, opts.Checksum)
	h, _ := m.Prepend(ipv4.MinHeaderLen)
	i.emitIP(m, ipv4.Packet(h), ipv4.Repr{
		Src: i.ip, Dst: dst, Protocol: proto, PayloadLen: len(seg),
		TTL: i.ttl(opts), TOS: opts.TOS, Ident: i.nextID(), DontFrag: opts.DontFrag,
	})
	return i.sendFrame(now, m, next, bcast)
}

func (i *Interface) ttl(opts OutputOptions) uint8 {
	if opts.TTL != 0 {
		return opts.TTL
	}
	return uint8(i.cfg.TTL)
}

// emitIP writes an IPv4 header, leaving its checksum to the NIC when the
// link offloads it (RTE_MBUF_F_TX_IP_CKSUM with l2_len and l3_len set).
func (i *Interface) emitIP(m *hw.Mbuf, h ipv4.Packet, r ipv4.Repr) {
	off := i.txOff&hw.TxOffloadIPv4Checksum != 0
	r.Emit(h, !off)
	m.Flags |= hw.TxIPv4
	if off {
		m.Flags |= hw.TxIPChecksum
		i.stats.Tx.IPChecksumOffload++
	} else {
		i.charge(hw.CostChecksumByte, ipv4.MinHeaderLen)
	}
}

// l4Checksum fills the transport checksum of seg (unfragmented), asking
// the NIC to do it when the link offloads that protocol: the field then
// holds the pseudo-header sum (DPDK's rte_ipv4_phdr_cksum convention).
func (i *Interface) l4Checksum(m *hw.Mbuf, seg []byte, dst [4]byte, proto ipv4.Protocol, c Checksum) {
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
		i.softL4Checksum(seg, dst, proto, c)
		return
	}
	m.Flags |= flag
	c.fillPseudo(seg, pseudoHeaderSum(i.ip, dst, proto, len(seg)))
}

// softL4Checksum fills the transport checksum of seg in software.
func (i *Interface) softL4Checksum(seg []byte, dst [4]byte, proto ipv4.Protocol, c Checksum) {
	if c == ChecksumNone || len(seg) < c.headerLen() {
		return
	}
	i.charge(hw.CostChecksumByte, int64(len(seg)))
	c.fill(seg, pseudoHeaderSum(i.ip, dst, proto, len(seg)))
}

// pseudoHeaderSum is the unfolded sum of the IPv4 pseudo-header of a
// transport segment of length bytes (RFC 9293 section 3.1 for TCP, RFC
// 768 for UDP): what the transport checksum covers besides the segment.
func pseudoHeaderSum(src, dst [4]byte, proto ipv4.Protocol, length int) uint64 {
	return checksum.PseudoHeaderV4(src, dst, uint8(proto), length)
}

// SendIPv4 is the copying counterpart of OutputIPv4: it sends the
// transport bytes in payload (which it does not keep or modify) to dst,
// filling the transport checksum if opts.Checksum asks. For the per-packet
// path prefer AllocTransport and OutputIPv4, which copy nothing.
func (i *Interface) SendIPv4(now time.Duration, dst [4]byte, proto ipv4.Protocol, payload []byte, opts OutputOptions) error {
	if len(payload) > len(i.scratch) {
		i.stats.IP.OutRequests++
		i.stats.IP.OutDiscards++
		return ErrMessageTooLong
	}
	b := i.scratch[:len(payload)]
	copy(b, payload)
	return i.sendBytes(now, b, dst, proto, opts)
}

// sendBytes sends a transport payload held outside any mbuf (the caller
// lets it be modified: its checksum is filled in place if opts asks):
// copied into one mbuf if it fits the MTU, fragmented from the bytes
// otherwise.
func (i *Interface) sendBytes(now time.Duration, b []byte, dst [4]byte, proto ipv4.Protocol, opts OutputOptions) error {
	if ipv4.MinHeaderLen+len(b) <= i.mtu {
		m := i.AllocTransport()
		if m == nil {
			i.stats.IP.OutRequests++
			i.stats.IP.OutDiscards++
			return ErrNoMbuf
		}
		if seg, err := m.Append(len(b)); err == nil {
			copy(seg, b)
			i.charge(hw.CostCopyByte, int64(len(b)))
			return i.OutputIPv4(now, m, dst, proto, opts)
		}
		// Fits the MTU but not one mbuf (jumbo MTU): fragment below.
		m.Free()
	}
	st := &i.stats.IP
	st.OutRequests++
	i.charge(CostIPTx, 1)
	next, bcast, err := i.route(dst)
	if err != nil {
		i.routeFail(err)
		return err
	}
	if ipv4.MinHeaderLen+len(b) > ipv4.MaxDatagramLen {
		st.OutDiscards++
		return ErrMessageTooLong
	}
	if opts.DontFrag {
		st.FragFails++
		st.FragFailsDF++
		return ErrMessageTooLong
	}
	i.softL4Checksum(b, dst, proto, opts.Checksum)
	return i.fragment(now, b, dst, next, bcast, proto, opts)
}

// fragment sends payload as fragments that fit the MTU (RFC 791 section
// 3.2, "fragmentation"): each carries a copy of the header with its
// offset, all but the last with MF set and a multiple of 8 bytes.
func (i *Interface) fragment(now time.Duration, payload []byte, dst, next [4]byte, bcast bool, proto ipv4.Protocol, opts OutputOptions) error {
	st := &i.stats.IP
	chunk := ipv4.MaxFragmentPayload(i.mtu, ipv4.MinHeaderLen)
	id := i.nextID()
	for off := 0; off < len(payload); {
		m := i.AllocTransport()
		if m == nil {
			st.FragFails++
			st.FragFailsNoMbuf++
			return ErrNoMbuf
		}
		// A fragment fits the MTU and the mbuf: with jumbo MTUs over
		// 2 KiB mbufs the mbuf is the limit (fragments may be smaller
		// than the MTU; only their payload must be a multiple of 8).
		n := min(chunk, len(payload)-off)
		if room := m.Tailroom() - ipv4.MinHeaderLen; n > room {
			n = room &^ 7
		}
		if n <= 0 {
			i.stats.Tx.NoMbuf++
			st.FragFails++
			st.FragFailsNoMbuf++
			m.Free()
			return ErrNoMbuf
		}
		b, _ := m.Append(ipv4.MinHeaderLen + n)
		m.L2Len, m.L3Len = ether.HeaderLen, ipv4.MinHeaderLen
		copy(b[ipv4.MinHeaderLen:], payload[off:off+n])
		i.charge(hw.CostCopyByte, int64(n))
		i.emitIP(m, ipv4.Packet(b), ipv4.Repr{
			Src: i.ip, Dst: dst, Protocol: proto, PayloadLen: n,
			TTL: i.ttl(opts), TOS: opts.TOS, Ident: id,
			MoreFrags: off+n < len(payload), FragOffset: off,
		})
		st.FragCreates++
		off += n
		if err := i.sendFrame(now, m, next, bcast); err != nil {
			return err
		}
	}
	st.FragOKs++
	return nil
}

// sendFrame prepends the Ethernet header to an IP datagram in m and
// sends it to next's MAC, resolving it first (the ARP cache may queue
// m). It owns m.
func (i *Interface) sendFrame(now time.Duration, m *hw.Mbuf, next [4]byte, bcast bool) error {
	h, err := m.Prepend(ether.HeaderLen)
	if err != nil {
		i.stats.Tx.NoHeadroom++
		i.stats.IP.OutDiscards++
		m.Free()
		return ErrNoHeadroom
	}
	f := ether.Frame(h)
	f.SetSrc(i.mac)
	f.SetEtherType(ether.TypeIPv4)
	if bcast {
		f.SetDst(ether.BroadcastAddr())
		i.transmit(m)
		return nil
	}
	mac, ok := i.arp.Resolve(now, next, m, i.arpSink())
	if ok {
		f.SetDst(mac)
		i.transmit(m)
	}
	return nil
}

// transmit pads a frame to the Ethernet minimum and hands it to the link.
func (i *Interface) transmit(m *hw.Mbuf) {
	if short := ether.MinFrameLen - m.DataLen; short > 0 {
		if pad, err := m.Append(short); err == nil {
			clear(pad)
			i.stats.Tx.Padded++
		}
	}
	i.stats.Tx.Frames++
	i.stats.Tx.Bytes += uint64(m.DataLen)
	i.link.Transmit(m)
}
