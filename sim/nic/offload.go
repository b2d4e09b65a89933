package nic

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/hw"
)

// pseudoHeader returns the unfolded sum of the transport pseudo-header of
// the classified frame: RFC 768/793 for IPv4, RFC 8200 section 8.1 for
// IPv6. The sums are the model's own (checksum.go), not the stack's.
func pseudoHeader(f *FrameInfo, l4len int) uint64 {
	if f.L3 == L3IPv4 {
		var s, d [4]byte
		copy(s[:], f.Src[:4])
		copy(d[:], f.Dst[:4])
		return pseudoSumV4(s, d, f.Proto, l4len)
	}
	return pseudoSumV6(f.Src[:], f.Dst[:], f.Proto, l4len)
}

// rxChecksumFlags verifies the checksums of a received frame as a NIC
// with rx checksum offload does and returns the mbuf flags to set
// (RTE_MBUF_F_RX_IP_CKSUM_* and RTE_MBUF_F_RX_L4_CKSUM_*). A checksum the
// NIC cannot verify (not IP, a fragment, a truncated datagram) gets no
// flag: DPDK's "unknown".
func rxChecksumFlags(frame []byte, f *FrameInfo, offloads hw.RxOffloads) hw.OffloadFlags {
	var flags hw.OffloadFlags
	if f.L3 == L3IPv4 && offloads&hw.RxOffloadIPv4Checksum != 0 {
		hdr := frame[f.L2Len : f.L2Len+f.L3Len]
		if inetChecksum(hdr) == 0 {
			flags |= hw.RxIPChecksumGood
		} else {
			flags |= hw.RxIPChecksumBad
		}
	}
	if f.Fragment {
		return flags
	}
	var want hw.RxOffloads
	switch f.L4 {
	case L4TCP:
		want = hw.RxOffloadTCPChecksum
	case L4UDP:
		want = hw.RxOffloadUDPChecksum
	default:
		return flags
	}
	if offloads&want == 0 {
		return flags
	}
	// The datagram must be whole in the frame to be summed.
	ipEnd := f.L2Len + f.L3Total
	if f.L3 == L3IPv4 {
		if int(binary.BigEndian.Uint16(frame[f.L2Len+2:])) != f.L3Total {
			return flags
		}
	} else if int(binary.BigEndian.Uint16(frame[f.L2Len+4:]))+ipv6HeaderLen != f.L3Total {
		return flags
	}
	l4 := frame[f.L4Off():ipEnd]
	if f.L4 == L4UDP {
		field := binary.BigEndian.Uint16(l4[6:])
		if field == 0 {
			// RFC 768: zero means no checksum over IPv4; RFC 8200
			// section 8.1 forbids it over IPv6.
			if f.L3 == L3IPv4 {
				return flags | hw.RxL4ChecksumGood
			}
			return flags | hw.RxL4ChecksumBad
		}
	}
	if checksumFrom(pseudoHeader(f, len(l4)), l4) == 0 {
		return flags | hw.RxL4ChecksumGood
	}
	return flags | hw.RxL4ChecksumBad
}

// txOffloadResult says what tx checksum offload did to one frame, for
// the port's counters.
type txOffloadResult struct {
	notEnabled  bool // the mbuf asked for an offload the port was not configured for
	malformed   bool // the headers the mbuf described are not in the frame
	phdrMissing bool // the L4 checksum field did not hold the pseudo-header sum
}

// applyTxChecksums fills the checksums an mbuf asked for
// (RTE_MBUF_F_TX_IP_CKSUM, RTE_MBUF_F_TX_TCP_CKSUM, RTE_MBUF_F_TX_UDP_CKSUM)
// into frame, the copy of the packet going onto the wire, as the NIC does
// during DMA. Header lengths come from the mbuf (l2_len, l3_len), as DPDK
// requires; when they are zero the frame is parsed instead.
//
// Intel NICs sum only the L4 bytes, seeded with the value in the checksum
// field, so DPDK applications must first write the pseudo-header sum
// there (rte_ipv4_phdr_cksum). The model computes the full checksum
// either way, but reports a field that did not hold the pseudo-header sum,
// since such a frame would leave real hardware with a wrong checksum.
func applyTxChecksums(frame []byte, m *hw.Mbuf, enabled hw.TxOffloads) txOffloadResult {
	var res txOffloadResult
	ask := m.Flags & (hw.TxIPChecksum | hw.TxTCPChecksum | hw.TxUDPChecksum)
	if ask == 0 {
		return res
	}
	var f FrameInfo
	Classify(frame, &f)
	if m.L2Len != 0 && int(m.L2Len) != f.L2Len || m.L3Len != 0 && int(m.L3Len) != f.L3Len {
		// The mbuf describes headers other than those the frame holds;
		// real hardware would write at the described offsets and
		// corrupt the frame. Refuse and count.
		res.malformed = true
		return res
	}
	if ask&hw.TxIPChecksum != 0 {
		switch {
		case enabled&hw.TxOffloadIPv4Checksum == 0:
			res.notEnabled = true
		case f.L3 != L3IPv4:
			res.malformed = true
		default:
			hdr := frame[f.L2Len : f.L2Len+f.L3Len]
			hdr[10], hdr[11] = 0, 0
			binary.BigEndian.PutUint16(hdr[10:], inetChecksum(hdr))
		}
	}
	var need hw.TxOffloads
	var l4 L4Type
	var field int
	switch {
	case ask&hw.TxTCPChecksum != 0:
		need, l4, field = hw.TxOffloadTCPChecksum, L4TCP, 16
	case ask&hw.TxUDPChecksum != 0:
		need, l4, field = hw.TxOffloadUDPChecksum, L4UDP, 6
	default:
		return res
	}
	switch {
	case enabled&need == 0:
		res.notEnabled = true
		return res
	case f.L4 != l4 || f.Fragment:
		res.malformed = true
		return res
	}
	seg := frame[f.L4Off() : f.L2Len+f.L3Total]
	phdr := pseudoHeader(&f, len(seg))
	if binary.BigEndian.Uint16(seg[field:]) != fold16(phdr) {
		res.phdrMissing = true
	}
	seg[field], seg[field+1] = 0, 0
	sum := checksumFrom(phdr, seg)
	if l4 == L4UDP && sum == 0 {
		sum = 0xffff // RFC 768: a computed zero is sent as all ones
	}
	binary.BigEndian.PutUint16(seg[field:], sum)
	return res
}
