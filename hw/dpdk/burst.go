//go:build dpdk

package dpdk

/*
#include "sv_dpdk.h"
*/
import "C"

import (
	"github.com/savanna-sim/savanna/hw"
)

// Reference counts across the boundary. The Go side counts references in
// hw.Mbuf.RefCnt (RefInc, Free); DPDK counts them in rte_mbuf.refcnt. The
// rule that keeps both right:
//
//	refcnt = (1 if RefCnt > 0) + references held by devices
//
// So Put (reached when RefCnt drops to zero) drops exactly one DPDK
// reference. TxBurst hands one Go reference to the device: when the
// caller keeps others (RefCnt > 1, say a TCP retransmission queue) the
// device gets a new DPDK reference (refcnt + 1); when it was the last, the
// Go side's DPDK reference passes to the device. A device that hands an
// mbuf the Go side still holds back on rx (net_ring passes mbufs between
// its ports without a copy) gives its reference back the same way.

// RxBurst implements hw.EthDev (rte_eth_rx_burst): one call into C, which
// also describes every segment, then the twins are filled in Go.
func (p *EthDev) RxBurst(q int, pkts []*hw.Mbuf) int {
	if q < 0 || q >= len(p.rxq) || p.rxq[q] == nil {
		return 0
	}
	r := p.rxq[q]
	n := min(len(pkts), maxBurst)
	if n == 0 {
		return 0
	}
	var nsegs C.uint32_t
	got := int(C.sv_rx_burst(p.id, C.uint16_t(q), &r.pkts[0], C.uint16_t(n),
		&r.segs[0], C.uint32_t(len(r.segs)), &nsegs))
	r.stats.bursts++
	if got == 0 {
		return 0
	}
	segs := r.segs[:min(int(nsegs), len(r.segs))]
	var give []C.uintptr_t // references to drop (shared mbufs); rare
	k, out := 0, 0
	for i := 0; i < got; i++ {
		var view []C.struct_sv_seg
		if k < len(segs) && k+int(segs[k].nb_segs) <= len(segs) {
			view = segs[k : k+int(segs[k].nb_segs)]
			k += len(view)
		} else {
			// The chain did not fit the scratch array: describe it alone.
			k = len(segs)
			view = make([]C.struct_sv_seg, int(C.sv_nb_segs(r.pkts[i])))
			view = view[:int(C.sv_chain_view(r.pkts[i], &view[0], C.uint32_t(len(view))))]
		}
		m, shared := p.eal.twinChain(view, r.q)
		if m == nil {
			r.stats.foreign++
			C.sv_free_chain(r.pkts[i])
			continue
		}
		give = append(give, shared...)
		pkts[out] = m
		out++
	}
	if len(give) > 0 {
		C.sv_refcnt_add(&give[0], C.uint32_t(len(give)), -1)
	}
	return out
}

// twinChain fills the twins of one received chain and links them. It
// returns nil when a segment is not from a pool of this EAL, and the
// segments whose twin the Go side already held (see the rule above).
func (e *EAL) twinChain(view []C.struct_sv_seg, q uint16) (*hw.Mbuf, []C.uintptr_t) {
	var head, prev *hw.Mbuf
	var shared []C.uintptr_t
	for j := range view {
		s := &view[j]
		pool := e.poolByNo(uint32(s.pool))
		if pool == nil || pool.mp != s.mp || int(s.idx) >= len(pool.twins) {
			return nil, nil
		}
		t := &pool.twins[s.idx]
		if t.RefCnt > 0 {
			// Still held on the Go side (a pass-through PMD returned an mbuf
			// we transmitted): the device's reference becomes a Go one.
			t.RefCnt++
			shared = append(shared, s.m)
		} else {
			t.DataOff = int(s.data_off)
			t.DataLen = int(s.data_len)
			t.PktLen = int(s.pkt_len)
			t.NbSegs = int(s.nb_segs)
			t.RefCnt = 1
			t.Flags = hw.OffloadFlags(s.ol_flags)
			t.RSSHash = uint32(s.rss)
			t.Port = uint16(s.port)
			t.Queue = q
			t.L2Len, t.L3Len, t.L4Len = 0, 0, 0
			t.Timestamp = 0
			t.Next = nil
		}
		if prev == nil {
			head = t
		} else {
			prev.Next = t
		}
		prev = t
	}
	return head, shared
}

// owned reports whether every segment of chain m is backed by an rte_mbuf
// of this EAL's pools, with sane bounds, so that it can be written back.
func (e *EAL) owned(m *hw.Mbuf) bool {
	for s := m; s != nil; s = s.Next {
		pool, ok := s.Pool.(*Mempool)
		if !ok || pool.eal != e || s.Handle == 0 || s.RefCnt < 1 ||
			s.DataOff < 0 || s.DataLen < 0 || s.DataOff+s.DataLen > len(s.Buf) {
			return false
		}
	}
	return true
}

// TxBurst implements hw.EthDev (rte_eth_tx_burst): the Go view of every
// segment is written back to its rte_mbuf and the burst handed to the
// port in one call into C. An mbuf that is not this package's (or is
// malformed) is taken and dropped when it comes first, and ends the burst
// otherwise; EthDevStats.TxForeign counts it.
func (p *EthDev) TxBurst(q int, pkts []*hw.Mbuf) int {
	if q < 0 || q >= len(p.txq) || p.txq[q] == nil {
		return 0
	}
	t := p.txq[q]
	n := min(len(pkts), maxBurst)
	if n == 0 {
		return 0
	}
	segs := t.segs[:0]
	heads := 0
	for i := 0; i < n; i++ {
		m := pkts[i]
		if m == nil || !p.eal.owned(m) {
			if i == 0 {
				t.stats.foreign++
				if m != nil {
					m.Free()
				}
				return 1
			}
			break
		}
		first := len(segs)
		total, nb := 0, 0
		for s := m; s != nil; s = s.Next {
			total += s.DataLen
			nb++
		}
		if len(segs)+nb > cap(segs) {
			// Longer chains than the scratch array holds: grow it (rare).
			bigger := cArray[C.struct_sv_seg](2 * (len(segs) + nb))
			copy(bigger, segs)
			cFree(t.segs)
			t.segs = bigger
			segs = bigger[:len(segs)]
		}
		for s := m; s != nil; s = s.Next {
			next := C.int32_t(-1)
			if s.Next != nil {
				next = C.int32_t(len(segs) + 1)
			}
			refinc := C.uint16_t(0)
			if s.RefCnt > 1 {
				refinc = 1
			}
			segs = append(segs, C.struct_sv_seg{
				m:        C.uintptr_t(s.Handle),
				ol_flags: C.uint64_t(s.Flags),
				pkt_len:  C.uint32_t(s.DataLen),
				data_off: C.uint16_t(s.DataOff),
				data_len: C.uint16_t(s.DataLen),
				nb_segs:  1,
				port:     C.uint16_t(p.id),
				refcnt:   refinc,
				l2_len:   C.uint16_t(s.L2Len),
				l3_len:   C.uint16_t(s.L3Len),
				l4_len:   C.uint16_t(s.L4Len),
				next:     next,
			})
			// The device gets one reference; give it up now, before the
			// device (or a peer port's lcore) can touch the mbuf.
			s.RefCnt--
		}
		segs[first].pkt_len = C.uint32_t(total)
		segs[first].nb_segs = C.uint16_t(nb)
		t.pkts[heads] = segs[first].m
		heads++
	}
	if heads == 0 {
		return 0
	}
	taken := int(C.sv_tx_burst(p.id, C.uint16_t(q), &t.pkts[0], C.uint16_t(heads), &segs[0], C.uint32_t(len(segs))))
	t.stats.bursts++
	if taken < heads {
		// The caller keeps the rest: restore their references.
		var back []C.uintptr_t
		for _, m := range pkts[taken:heads] {
			for s := m; s != nil; s = s.Next {
				s.RefCnt++
				if s.RefCnt > 1 {
					back = append(back, C.uintptr_t(s.Handle))
				}
			}
		}
		if len(back) > 0 {
			C.sv_refcnt_add(&back[0], C.uint32_t(len(back)), -1)
		}
	}
	return taken
}
