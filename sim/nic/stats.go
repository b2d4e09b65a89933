package nic

import (
	"fmt"

	"github.com/savanna-sim/savanna/hw"
)

// PortCounters are every counter of a port: rte_eth_stats' fields and the
// extended statistics, with the reasons behind each error. Byte counts
// exclude the FCS, as DPDK reports them with CRC stripping.
type PortCounters struct {
	IPackets uint64 `json:"ipackets"`
	OPackets uint64 `json:"opackets"`
	IBytes   uint64 `json:"ibytes"`
	OBytes   uint64 `json:"obytes"`
	// IMissed counts frames dropped because their rx ring was full.
	IMissed uint64 `json:"imissed"`
	// IErrors counts frames received in error: bad FCS, too long,
	// too short, or larger than one mbuf.
	IErrors uint64 `json:"ierrors"`
	// OErrors counts packets TxBurst took but could not send.
	OErrors uint64 `json:"oerrors"`
	// RxNoMbuf counts frames dropped because the queue's mempool was
	// empty.
	RxNoMbuf uint64 `json:"rx_nombuf"`

	// Receive errors by reason (each also in IErrors).
	RxCRCErrors    uint64 `json:"rx_crc_errors"`
	RxOversize     uint64 `json:"rx_oversize_errors"`
	RxUndersize    uint64 `json:"rx_undersize_errors"`
	RxMbufTooSmall uint64 `json:"rx_mbuf_too_small_errors"`
	// Checksum verdicts of rx offload; the packets are delivered with
	// the bad flag, not dropped.
	RxIPChecksumBad uint64 `json:"rx_ip_checksum_bad"`
	RxL4ChecksumBad uint64 `json:"rx_l4_checksum_bad"`
	// RxPortStopped counts frames that arrived while the port was
	// stopped (a real NIC drops them before any counter).
	RxPortStopped uint64 `json:"rx_port_stopped_drops"`
	// RxFlushed counts received packets freed unread by Stop or
	// Configure.
	RxFlushed uint64 `json:"rx_flushed_at_stop"`

	// Transmit drops by reason (each also in OErrors).
	TxLinkDown           uint64 `json:"tx_link_down_drops"`
	TxBadLength          uint64 `json:"tx_bad_length_drops"`
	TxMultiSegNotEnabled uint64 `json:"tx_multi_seg_not_enabled_drops"`
	// TxRingFull counts TxBurst calls that stopped early on a full
	// ring (the caller keeps the rest: not a drop).
	TxRingFull uint64 `json:"tx_ring_full"`
	// Tx offload problems: an offload asked for but not configured
	// (sent without it), headers that are not what the mbuf said (sent
	// unchanged), and an L4 checksum field not seeded with the
	// pseudo-header sum that real Intel hardware needs (sent correct
	// here, wrong on real hardware).
	TxOffloadNotEnabled     uint64 `json:"tx_offload_not_enabled"`
	TxOffloadBadHeaders     uint64 `json:"tx_offload_bad_headers"`
	TxL4PseudoHeaderMissing uint64 `json:"tx_l4_phdr_cksum_missing"`
}

// QueueStats count one queue.
type QueueStats struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
	// Missed counts frames dropped on a full ring (rx only).
	Missed uint64 `json:"missed"`
	// NoMbuf counts frames dropped for want of an mbuf (rx only).
	NoMbuf uint64 `json:"nombuf"`
	// BacklogPeak is the most frames that waited on the queue's
	// software backlog at once (rx only; a queue whose core drains the
	// ring, RxDrainer, Linux's NAPI into socket receive queues).
	BacklogPeak uint64 `json:"backlog_peak"`
}

// Counters returns all of the port's counters.
func (p *Port) Counters() PortCounters { return p.stats }

// RxQueueStats and TxQueueStats return the per-queue counters.
func (p *Port) RxQueueStats(q int) QueueStats {
	if q < 0 || q >= len(p.rx) {
		return QueueStats{}
	}
	return p.rx[q].stats
}

// TxQueueStats returns tx queue q's counters.
func (p *Port) TxQueueStats(q int) QueueStats {
	if q < 0 || q >= len(p.tx) {
		return QueueStats{}
	}
	return p.tx[q].stats
}

// Stats implements hw.EthDev (rte_eth_stats_get).
func (p *Port) Stats() hw.EthStats {
	s := hw.EthStats{
		IPackets: p.stats.IPackets, OPackets: p.stats.OPackets,
		IBytes: p.stats.IBytes, OBytes: p.stats.OBytes,
		IMissed: p.stats.IMissed, IErrors: p.stats.IErrors,
		OErrors: p.stats.OErrors, RxNoMbuf: p.stats.RxNoMbuf,
	}
	for i := range p.rx {
		s.QIPackets = append(s.QIPackets, p.rx[i].stats.Packets)
		s.QIBytes = append(s.QIBytes, p.rx[i].stats.Bytes)
		s.QErrors = append(s.QErrors, p.rx[i].stats.Missed+p.rx[i].stats.NoMbuf)
	}
	for i := range p.tx {
		s.QOPackets = append(s.QOPackets, p.tx[i].stats.Packets)
		s.QOBytes = append(s.QOBytes, p.tx[i].stats.Bytes)
	}
	return s
}

// XStats implements hw.EthDev. The order is DPDK's: the generic
// statistics under their ethdev names (rx_good_packets ...), then per
// queue (rx_q0_packets ...), then the model's own, in a fixed order.
func (p *Port) XStats() []hw.XStat {
	s := &p.stats
	x := []hw.XStat{
		{Name: "rx_good_packets", Value: s.IPackets},
		{Name: "tx_good_packets", Value: s.OPackets},
		{Name: "rx_good_bytes", Value: s.IBytes},
		{Name: "tx_good_bytes", Value: s.OBytes},
		{Name: "rx_missed_errors", Value: s.IMissed},
		{Name: "rx_errors", Value: s.IErrors},
		{Name: "tx_errors", Value: s.OErrors},
		{Name: "rx_mbuf_allocation_errors", Value: s.RxNoMbuf},
	}
	for i := range p.rx {
		q := &p.rx[i].stats
		x = append(x,
			hw.XStat{Name: fmt.Sprintf("rx_q%d_packets", i), Value: q.Packets},
			hw.XStat{Name: fmt.Sprintf("rx_q%d_bytes", i), Value: q.Bytes},
			hw.XStat{Name: fmt.Sprintf("rx_q%d_errors", i), Value: q.Missed + q.NoMbuf},
			hw.XStat{Name: fmt.Sprintf("rx_q%d_missed", i), Value: q.Missed},
			hw.XStat{Name: fmt.Sprintf("rx_q%d_backlog_peak", i), Value: q.BacklogPeak},
			hw.XStat{Name: fmt.Sprintf("rx_q%d_nombuf", i), Value: q.NoMbuf})
	}
	for i := range p.tx {
		q := &p.tx[i].stats
		x = append(x,
			hw.XStat{Name: fmt.Sprintf("tx_q%d_packets", i), Value: q.Packets},
			hw.XStat{Name: fmt.Sprintf("tx_q%d_bytes", i), Value: q.Bytes})
	}
	return append(x,
		hw.XStat{Name: "rx_crc_errors", Value: s.RxCRCErrors},
		hw.XStat{Name: "rx_oversize_errors", Value: s.RxOversize},
		hw.XStat{Name: "rx_undersize_errors", Value: s.RxUndersize},
		hw.XStat{Name: "rx_mbuf_too_small_errors", Value: s.RxMbufTooSmall},
		hw.XStat{Name: "rx_ip_checksum_bad", Value: s.RxIPChecksumBad},
		hw.XStat{Name: "rx_l4_checksum_bad", Value: s.RxL4ChecksumBad},
		hw.XStat{Name: "rx_port_stopped_drops", Value: s.RxPortStopped},
		hw.XStat{Name: "rx_flushed_at_stop", Value: s.RxFlushed},
		hw.XStat{Name: "tx_link_down_drops", Value: s.TxLinkDown},
		hw.XStat{Name: "tx_bad_length_drops", Value: s.TxBadLength},
		hw.XStat{Name: "tx_multi_seg_not_enabled_drops", Value: s.TxMultiSegNotEnabled},
		hw.XStat{Name: "tx_ring_full", Value: s.TxRingFull},
		hw.XStat{Name: "tx_offload_not_enabled", Value: s.TxOffloadNotEnabled},
		hw.XStat{Name: "tx_offload_bad_headers", Value: s.TxOffloadBadHeaders},
		hw.XStat{Name: "tx_l4_phdr_cksum_missing", Value: s.TxL4PseudoHeaderMissing},
	)
}

// ResetStats implements hw.EthDev (rte_eth_stats_reset and
// rte_eth_xstats_reset).
func (p *Port) ResetStats() {
	p.stats = PortCounters{}
	for i := range p.rx {
		p.rx[i].stats = QueueStats{}
	}
	for i := range p.tx {
		p.tx[i].stats = QueueStats{}
	}
}
