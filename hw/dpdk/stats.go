//go:build dpdk

package dpdk

/*
#include "sv_dpdk.h"
*/
import "C"

import (
	"github.com/savanna-sim/savanna/hw"
)

// Stats implements hw.EthDev (rte_eth_stats_get). The per-queue slices
// cover the configured queues, up to RTE_ETHDEV_QUEUE_STAT_CNTRS (16):
// DPDK keeps no per-queue basic counters beyond that.
func (p *EthDev) Stats() hw.EthStats {
	var s C.struct_rte_eth_stats
	if C.rte_eth_stats_get(p.id, &s) != 0 {
		return hw.EthStats{}
	}
	nrx := min(len(p.rxq), C.RTE_ETHDEV_QUEUE_STAT_CNTRS)
	ntx := min(len(p.txq), C.RTE_ETHDEV_QUEUE_STAT_CNTRS)
	out := hw.EthStats{
		IPackets: uint64(s.ipackets),
		OPackets: uint64(s.opackets),
		IBytes:   uint64(s.ibytes),
		OBytes:   uint64(s.obytes),
		IMissed:  uint64(s.imissed),
		IErrors:  uint64(s.ierrors),
		OErrors:  uint64(s.oerrors),
		RxNoMbuf: uint64(s.rx_nombuf),

		QIPackets: make([]uint64, nrx),
		QIBytes:   make([]uint64, nrx),
		QErrors:   make([]uint64, nrx),
		QOPackets: make([]uint64, ntx),
		QOBytes:   make([]uint64, ntx),
	}
	for q := 0; q < nrx; q++ {
		out.QIPackets[q] = uint64(s.q_ipackets[q])
		out.QIBytes[q] = uint64(s.q_ibytes[q])
		out.QErrors[q] = uint64(s.q_errors[q])
	}
	for q := 0; q < ntx; q++ {
		out.QOPackets[q] = uint64(s.q_opackets[q])
		out.QOBytes[q] = uint64(s.q_obytes[q])
	}
	return out
}

// DriverStats returns the driver's own counters, summed over queues.
// Read them while the queues are quiet for exact figures.
func (p *EthDev) DriverStats() EthDevStats {
	var s EthDevStats
	for _, r := range p.rxq {
		if r != nil {
			s.RxForeign += r.stats.foreign
			s.RxBursts += r.stats.bursts
		}
	}
	for _, t := range p.txq {
		if t != nil {
			s.TxForeign += t.stats.foreign
			s.TxBursts += t.stats.bursts
		}
	}
	return s
}

// XStats implements hw.EthDev (rte_eth_xstats_get_names and
// rte_eth_xstats_get), followed by the driver's own counters named
// savanna_rx_foreign and so on.
func (p *EthDev) XStats() []hw.XStat {
	var out []hw.XStat
	n := int(C.rte_eth_xstats_get_names(p.id, nil, 0))
	if n > 0 {
		names := make([]C.struct_rte_eth_xstat_name, n)
		vals := make([]C.struct_rte_eth_xstat, n)
		nn := int(C.rte_eth_xstats_get_names(p.id, &names[0], C.uint(n)))
		nv := int(C.rte_eth_xstats_get(p.id, &vals[0], C.uint(n)))
		if nn == n && nv == n {
			out = make([]hw.XStat, 0, n+4)
			for _, v := range vals {
				if int(v.id) < n {
					out = append(out, hw.XStat{Name: C.GoString(&names[v.id].name[0]), Value: uint64(v.value)})
				}
			}
		}
	}
	d := p.DriverStats()
	return append(out,
		hw.XStat{Name: "savanna_rx_foreign", Value: d.RxForeign},
		hw.XStat{Name: "savanna_tx_foreign", Value: d.TxForeign},
		hw.XStat{Name: "savanna_rx_bursts", Value: d.RxBursts},
		hw.XStat{Name: "savanna_tx_bursts", Value: d.TxBursts},
	)
}

// ResetStats implements hw.EthDev (rte_eth_stats_reset and
// rte_eth_xstats_reset); the driver's own counters are kept, as they
// count events that are never undone.
func (p *EthDev) ResetStats() {
	C.rte_eth_stats_reset(p.id)
	C.rte_eth_xstats_reset(p.id)
}
