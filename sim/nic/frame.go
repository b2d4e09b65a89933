package nic

import "encoding/binary"

// Ethernet and IP constants the classifier needs (IEEE 802.3, IEEE
// 802.1Q, RFC 791, RFC 8200, IANA protocol numbers).
const (
	ethHeaderLen  = 14
	vlanTagLen    = 4
	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86dd
	etherTypeVLAN = 0x8100
	etherTypeQinQ = 0x88a8
	ipv4MinHeader = 20
	ipv6HeaderLen = 40
	protoTCP      = 6
	protoUDP      = 17
	tcpMinHeader  = 20
	udpHeaderLen  = 8

	// IPv6 extension headers the classifier walks (RFC 8200 section 4).
	ipv6HopByHop = 0
	ipv6Routing  = 43
	ipv6Fragment = 44
	ipv6DestOpts = 60
	// maxIPv6Ext bounds the extension headers walked, as NIC parsers
	// do: a packet with more is classified as IPv6 without L4.
	maxIPv6Ext = 4
)

// L3Type is the network layer a classifier found.
type L3Type uint8

// Network layers.
const (
	L3None L3Type = iota
	L3IPv4
	L3IPv6
)

// L4Type is the transport layer a classifier found.
type L4Type uint8

// Transport layers. L4Other is a transport the NIC does not parse (ICMP,
// SCTP ...) or a non-first fragment.
const (
	L4None L4Type = iota
	L4TCP
	L4UDP
	L4Other
)

// FrameInfo is what a NIC's packet parser learns from a frame: the
// layers, their offsets and the fields RSS hashes. It mirrors the packet
// type (RTE_PTYPE_*) and header lengths a DPDK PMD reports. Offsets are
// from the start of the frame; every offset and length it holds lies
// within the frame, so users may slice without checks.
type FrameInfo struct {
	L2Len int // Ethernet header, VLAN tags included
	L3    L3Type
	L3Len int // IP header, IPv6 extension headers included
	// L3Total is the IP datagram's length by its header (total length
	// for IPv4, 40 + payload length for IPv6), clipped to the frame.
	L3Total int
	L4      L4Type
	L4Len   int // TCP header with options, or 8 for UDP
	// Fragment is set for any IPv4 or IPv6 fragment; only a first
	// fragment has L4 headers, and even then its L4 checksum covers
	// data the NIC does not see.
	Fragment bool
	// Src and Dst are the IP addresses (the first 4 bytes for IPv4).
	Src, Dst [16]byte
	// SrcPort and DstPort are the TCP or UDP ports.
	SrcPort, DstPort uint16
	// Proto is the IP protocol number (next header of the last IPv6
	// header walked).
	Proto uint8
}

// L4Off returns the offset of the transport header.
func (f *FrameInfo) L4Off() int { return f.L2Len + f.L3Len }

// Classify parses frame into f. It never panics and never reads beyond
// frame: a truncated or malformed header stops the parse at the last
// layer that was whole, and f says how far it got.
func Classify(frame []byte, f *FrameInfo) {
	*f = FrameInfo{}
	if len(frame) < ethHeaderLen {
		return
	}
	off := 12
	etherType := binary.BigEndian.Uint16(frame[off:])
	// Up to two VLAN tags (802.1Q, and 802.1ad QinQ outside it).
	for tags := 0; tags < 2 && (etherType == etherTypeVLAN || etherType == etherTypeQinQ); tags++ {
		off += vlanTagLen
		if off+2 > len(frame) {
			return
		}
		etherType = binary.BigEndian.Uint16(frame[off:])
	}
	off += 2
	f.L2Len = off
	switch etherType {
	case etherTypeIPv4:
		classifyIPv4(frame, off, f)
	case etherTypeIPv6:
		classifyIPv6(frame, off, f)
	}
}

func classifyIPv4(frame []byte, off int, f *FrameInfo) {
	ip := frame[off:]
	if len(ip) < ipv4MinHeader || ip[0]>>4 != 4 {
		return
	}
	ihl := int(ip[0]&0x0f) * 4
	if ihl < ipv4MinHeader || ihl > len(ip) {
		return
	}
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if total < ihl {
		return
	}
	f.L3, f.L3Len = L3IPv4, ihl
	f.L3Total = min(total, len(ip))
	copy(f.Src[:4], ip[12:16])
	copy(f.Dst[:4], ip[16:20])
	f.Proto = ip[9]
	flagsFrag := binary.BigEndian.Uint16(ip[6:])
	// More-fragments set or a non-zero offset (RFC 791 section 3.1).
	if flagsFrag&0x3fff != 0 {
		f.Fragment = true
		f.L4 = L4Other
		return
	}
	classifyL4(frame[:off+f.L3Total], off+ihl, f)
}

func classifyIPv6(frame []byte, off int, f *FrameInfo) {
	ip := frame[off:]
	if len(ip) < ipv6HeaderLen || ip[0]>>4 != 6 {
		return
	}
	f.L3 = L3IPv6
	copy(f.Src[:], ip[8:24])
	copy(f.Dst[:], ip[24:40])
	f.L3Total = min(ipv6HeaderLen+int(binary.BigEndian.Uint16(ip[4:])), len(ip))
	next := ip[6]
	hlen := ipv6HeaderLen
	for i := 0; ; i++ {
		switch next {
		case ipv6HopByHop, ipv6Routing, ipv6DestOpts, ipv6Fragment:
		default:
			f.L3Len, f.Proto = hlen, next
			classifyL4(frame[:off+f.L3Total], off+hlen, f)
			return
		}
		if i == maxIPv6Ext || hlen+8 > f.L3Total {
			f.L3Len, f.Proto, f.L4 = hlen, next, L4Other
			return
		}
		ext := ip[hlen:]
		if next == ipv6Fragment {
			f.Fragment = true
			// Offset non-zero: no transport header here.
			if binary.BigEndian.Uint16(ext[2:])&0xfff8 != 0 {
				f.L3Len, f.Proto, f.L4 = hlen+8, ext[0], L4Other
				return
			}
			next = ext[0]
			hlen += 8
			continue
		}
		next = ext[0]
		hlen += (int(ext[1]) + 1) * 8
		if hlen > f.L3Total {
			f.L3Len, f.Proto, f.L4 = min(hlen, f.L3Total), next, L4Other
			return
		}
	}
}

// classifyL4 parses the transport header at off; frame ends where the IP
// datagram ends.
func classifyL4(frame []byte, off int, f *FrameInfo) {
	f.L4 = L4Other
	if off > len(frame) {
		return
	}
	l4 := frame[off:]
	switch f.Proto {
	case protoTCP:
		if len(l4) < tcpMinHeader {
			return
		}
		doff := int(l4[12]>>4) * 4
		if doff < tcpMinHeader || doff > len(l4) {
			return
		}
		f.L4, f.L4Len = L4TCP, doff
	case protoUDP:
		if len(l4) < udpHeaderLen {
			return
		}
		f.L4, f.L4Len = L4UDP, udpHeaderLen
	default:
		return
	}
	f.SrcPort = binary.BigEndian.Uint16(l4[0:])
	f.DstPort = binary.BigEndian.Uint16(l4[2:])
}
