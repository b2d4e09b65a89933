package hw

import "fmt"

// DefaultHeadroom mirrors RTE_PKTMBUF_HEADROOM: bytes reserved in front of
// the packet data so that headers can be prepended without a copy.
const DefaultHeadroom = 128

// MaxSegmentData mirrors the 16-bit data_len of rte_mbuf: one segment holds
// at most 64 KiB - 1 bytes, so larger buffers are chained.
const MaxSegmentData = 1<<16 - 1

// OffloadFlags mirrors the ol_flags bit field of rte_mbuf (RTE_MBUF_F_*).
type OffloadFlags uint64

// Receive-side flags set by the NIC.
const (
	// RxIPChecksumGood mirrors RTE_MBUF_F_RX_IP_CKSUM_GOOD.
	RxIPChecksumGood OffloadFlags = 1 << iota
	// RxIPChecksumBad mirrors RTE_MBUF_F_RX_IP_CKSUM_BAD.
	RxIPChecksumBad
	// RxL4ChecksumGood mirrors RTE_MBUF_F_RX_L4_CKSUM_GOOD.
	RxL4ChecksumGood
	// RxL4ChecksumBad mirrors RTE_MBUF_F_RX_L4_CKSUM_BAD.
	RxL4ChecksumBad
	// RxRSSHash mirrors RTE_MBUF_F_RX_RSS_HASH: Mbuf.RSSHash is valid.
	RxRSSHash
)

// Transmit-side flags set by the stack to ask the NIC for offloads.
const (
	// TxIPChecksum mirrors RTE_MBUF_F_TX_IP_CKSUM.
	TxIPChecksum OffloadFlags = 1 << (iota + 32)
	// TxTCPChecksum mirrors RTE_MBUF_F_TX_TCP_CKSUM.
	TxTCPChecksum
	// TxUDPChecksum mirrors RTE_MBUF_F_TX_UDP_CKSUM.
	TxUDPChecksum
	// TxIPv4 mirrors RTE_MBUF_F_TX_IPV4.
	TxIPv4
)

// Mbuf mirrors struct rte_mbuf: one segment of packet data in a buffer
// owned by a Mempool. The bytes live in Buf; the packet occupies
// Buf[DataOff : DataOff+DataLen]. A packet longer than one segment is a
// chain through Next, and only the first segment's PktLen and NbSegs are
// meaningful.
//
// An Mbuf is not safe for concurrent use: like an rte_mbuf it belongs to
// one lcore at a time and is handed over through rings.
type Mbuf struct {
	// Buf is the whole data room, headroom included.
	Buf []byte
	// DataOff is where packet data starts in Buf (rte_mbuf.data_off).
	DataOff int
	// DataLen is the number of data bytes in this segment (data_len).
	DataLen int
	// PktLen is the total length of the packet over all segments
	// (pkt_len); valid in the first segment.
	PktLen int
	// NbSegs is the number of segments in the chain (nb_segs).
	NbSegs int
	// Next is the next segment of the chain, or nil (next).
	Next *Mbuf
	// RefCnt is the reference count (refcnt). Free returns the mbuf to
	// its pool when it drops to zero.
	RefCnt int32
	// Pool is the mempool the mbuf returns to (pool).
	Pool Mempool
	// Flags are the offload flags (ol_flags).
	Flags OffloadFlags
	// RSSHash is the NIC's RSS hash of the packet (hash.rss), valid when
	// Flags has RxRSSHash.
	RSSHash uint32
	// Port is the input port (port).
	Port uint16
	// Queue is the rx queue the packet arrived on. rte_mbuf has no such
	// field; it is kept for statistics and tests.
	Queue uint16
	// L2Len, L3Len and L4Len give header lengths for tx offloads
	// (l2_len, l3_len, l4_len).
	L2Len, L3Len, L4Len uint16
	// Timestamp is when the packet was received (rte_mbuf dynfield
	// timestamp), in the run's clock.
	Timestamp int64
	// Handle is private to the backend that owns the mbuf (for hw/dpdk,
	// the address of the underlying rte_mbuf).
	Handle uintptr
}

// Data returns the packet bytes of this segment (rte_pktmbuf_mtod).
func (m *Mbuf) Data() []byte { return m.Buf[m.DataOff : m.DataOff+m.DataLen] }

// Headroom returns the free bytes in front of the data
// (rte_pktmbuf_headroom).
func (m *Mbuf) Headroom() int { return m.DataOff }

// Tailroom returns the free bytes after the data (rte_pktmbuf_tailroom).
func (m *Mbuf) Tailroom() int { return len(m.Buf) - m.DataOff - m.DataLen }

// Reset clears the packet and offload state and restores the default
// headroom (rte_pktmbuf_reset). The buffer and pool are kept.
func (m *Mbuf) Reset() {
	m.DataOff = min(DefaultHeadroom, len(m.Buf))
	m.DataLen, m.PktLen, m.NbSegs = 0, 0, 1
	m.Next = nil
	m.Flags, m.RSSHash = 0, 0
	m.Port, m.Queue = 0, 0
	m.L2Len, m.L3Len, m.L4Len = 0, 0, 0
	m.Timestamp = 0
}

// Append grows the data at the tail by n bytes and returns them
// (rte_pktmbuf_append on a single segment). It fails if the tailroom is
// too small.
func (m *Mbuf) Append(n int) ([]byte, error) {
	if n < 0 || n > m.Tailroom() {
		return nil, fmt.Errorf("mbuf append %d bytes: tailroom is %d", n, m.Tailroom())
	}
	start := m.DataOff + m.DataLen
	m.DataLen += n
	m.PktLen += n
	return m.Buf[start : start+n], nil
}

// Prepend grows the data at the head by n bytes and returns them
// (rte_pktmbuf_prepend). It fails if the headroom is too small.
func (m *Mbuf) Prepend(n int) ([]byte, error) {
	if n < 0 || n > m.DataOff {
		return nil, fmt.Errorf("mbuf prepend %d bytes: headroom is %d", n, m.DataOff)
	}
	m.DataOff -= n
	m.DataLen += n
	m.PktLen += n
	return m.Buf[m.DataOff : m.DataOff+n], nil
}

// Adj removes n bytes from the head of the data (rte_pktmbuf_adj).
func (m *Mbuf) Adj(n int) error {
	if n < 0 || n > m.DataLen {
		return fmt.Errorf("mbuf adj %d bytes: data length is %d", n, m.DataLen)
	}
	m.DataOff += n
	m.DataLen -= n
	m.PktLen -= n
	return nil
}

// Trim removes n bytes from the tail of the data (rte_pktmbuf_trim).
func (m *Mbuf) Trim(n int) error {
	if n < 0 || n > m.DataLen {
		return fmt.Errorf("mbuf trim %d bytes: data length is %d", n, m.DataLen)
	}
	m.DataLen -= n
	m.PktLen -= n
	return nil
}

// SetData replaces the data of a single-segment mbuf with a copy of b,
// keeping the default headroom. It fails if b does not fit.
func (m *Mbuf) SetData(b []byte) error {
	m.Reset()
	room := len(m.Buf) - m.DataOff
	if len(b) > room {
		return fmt.Errorf("mbuf set %d bytes: data room after headroom is %d", len(b), room)
	}
	copy(m.Buf[m.DataOff:], b)
	m.DataLen, m.PktLen = len(b), len(b)
	return nil
}

// RefInc adds a reference (rte_mbuf_refcnt_update(m, 1)), for a segment
// held in two places, such as a TCP retransmission queue and a tx ring.
func (m *Mbuf) RefInc() { m.RefCnt++ }

// Free drops one reference on every segment of the chain and returns the
// segments whose count reaches zero to their pools (rte_pktmbuf_free).
func (m *Mbuf) Free() {
	for seg := m; seg != nil; {
		next := seg.Next
		seg.RefCnt--
		if seg.RefCnt <= 0 {
			seg.RefCnt = 0
			seg.Next = nil
			if seg.Pool != nil {
				seg.Pool.Put(seg)
			}
		}
		seg = next
	}
}

// Bytes copies the packet data of the whole chain into dst (grown as
// needed) and returns it. It is for tests, captures and slow paths; the
// per-packet path reads segments in place.
func (m *Mbuf) Bytes(dst []byte) []byte {
	dst = dst[:0]
	for seg := m; seg != nil; seg = seg.Next {
		dst = append(dst, seg.Data()...)
	}
	return dst
}
