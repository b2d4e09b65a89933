package shmlink

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/savanna-sim/savanna/hw"
)

// word returns the 32-bit atomic at off in b (4-byte aligned: the
// region is page-aligned and every offset a multiple of 4).
func word(b []byte, off int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&b[off]))
}

// counters are one port's statistics, written by its lcore and read by
// anyone.
type counters struct {
	ipackets, ibytes, opackets, obytes atomic.Uint64
	// rxNoMbuf: frames left in the ring because the rx pool was empty
	// (they are taken on a later burst).
	rxNoMbuf atomic.Uint64
	// badDesc: descriptors the peer wrote that point outside its slots,
	// give a length outside 14..MTU+14 or set unknown flags; each is
	// consumed and dropped.
	badDesc atomic.Uint64
	// rxBadIndex and txBadIndex: the peer's head (rx) or tail (tx) was
	// more than a ring ahead of ours; rx resynchronises by dropping
	// what the ring held, tx sends nothing that burst.
	rxBadIndex, txBadIndex atomic.Uint64
	// txFull: frames refused because the ring was full (the caller
	// frees them: lstack counts them and TCP retransmits).
	txFull atomic.Uint64
	// txBadLen: frames shorter than an Ethernet header or longer than
	// the MTU's frame, dropped.
	txBadLen atomic.Uint64
	// txLinkDown: frames dropped because the link was down (the peer
	// absent or stopped, or this port stopped).
	txLinkDown atomic.Uint64
	// txDoorbells: futex wakes sent to the peer's armed ring;
	// rxDoorbells: wakes this side's watcher took.
	txDoorbells, rxDoorbells atomic.Uint64
	// peerGone: times the peer's lock was found released (it exited or
	// died).
	peerGone atomic.Uint64
}

// ring is one direction of the link as one side sees it: the shared
// control words, the descriptors and the producer's slots.
type ring struct {
	head, tail, armed, bell *atomic.Uint32
	desc                    []byte
	area                    []byte
	n, mask                 uint32
	slotSize, frameMax      int
	// wake wakes the waiters on a doorbell word (futex(2) FUTEX_WAKE).
	wake func(*atomic.Uint32)
}

// newRing is direction d of the region mem laid out as l.
func newRing(mem []byte, l layout, d int, wake func(*atomic.Uint32)) ring {
	rb := mem[l.ring[d] : l.ring[d]+ringDesc+l.slots*descSize]
	return ring{head: word(rb, ringHead), tail: word(rb, ringTail), armed: word(rb, ringArmed), bell: word(rb, ringBell),
		desc: rb[ringDesc:], area: mem[l.area[d] : l.area[d]+l.slots*l.slotSize],
		n: uint32(l.slots), mask: uint32(l.slots - 1), slotSize: l.slotSize, frameMax: l.frameMax, wake: wake}
}

// parseDesc checks one descriptor the peer wrote against the slots'
// size and the frame limit, and returns the frame's place in the slots.
func parseDesc(d []byte, area, frameMax int) (off, n int, ok bool) {
	le := binary.LittleEndian
	o, l, flags, rsv := le.Uint32(d[0:]), le.Uint32(d[4:]), le.Uint32(d[8:]), le.Uint32(d[12:])
	if flags != 0 || rsv != 0 || l < 14 || int64(l) > int64(frameMax) || int64(o)+int64(l) > int64(area) {
		return 0, 0, false
	}
	return int(o), int(l), true
}

// recv takes up to len(pkts) frames from the ring into mbufs of pool;
// tail is this side's consumer index, advanced past what it consumed.
// An empty ring is armed, then looked at once more, so that a frame the
// producer published while it was not armed is taken now rather than
// left to wait for a doorbell that never rings.
func (r *ring) recv(tail *uint32, pkts []*hw.Mbuf, pool hw.Mempool, c *counters) int {
	head := r.head.Load()
	if head == *tail {
		if r.armed.Load() != 0 {
			return 0
		}
		r.armed.Store(1)
		if head = r.head.Load(); head == *tail {
			return 0
		}
	}
	avail := head - *tail
	if avail > r.n {
		// Garbage from the peer: follow none of it.
		c.rxBadIndex.Add(1)
		*tail = head
		r.tail.Store(head)
		return 0
	}
	n, used := 0, uint32(0)
	var bytes uint64
	for used < avail && n < len(pkts) {
		i := (*tail + used) & r.mask
		off, l, ok := parseDesc(r.desc[int(i)*descSize:int(i+1)*descSize], len(r.area), r.frameMax)
		if !ok {
			c.badDesc.Add(1)
			used++
			continue
		}
		m := pool.Get()
		if m == nil {
			c.rxNoMbuf.Add(1)
			break
		}
		room := m.Buf[m.DataOff:]
		if l > len(room) {
			// The pool was checked at setup; keep the guard anyway.
			m.Free()
			c.badDesc.Add(1)
			used++
			continue
		}
		copy(room, r.area[off:off+l])
		m.DataLen, m.PktLen = l, l
		pkts[n] = m
		n++
		used++
		bytes += uint64(l)
	}
	if used > 0 {
		*tail += used
		r.tail.Store(*tail)
	}
	c.ipackets.Add(uint64(n))
	c.ibytes.Add(bytes)
	return n
}

// send copies frames into the slots the peer has freed and publishes
// them; head is this side's producer index. It returns how many of pkts
// it took (and freed): frames sent, and oversized ones dropped. The
// rest found the ring full.
func (r *ring) send(head *uint32, pkts []*hw.Mbuf, c *counters) int {
	used := *head - r.tail.Load()
	if used > r.n {
		c.txBadIndex.Add(1)
		c.txFull.Add(uint64(len(pkts)))
		return 0
	}
	free := r.n - used
	i, wrote := 0, uint32(0)
	var bytes uint64
	for ; i < len(pkts); i++ {
		m := pkts[i]
		if m.PktLen > r.frameMax || m.PktLen < 14 {
			c.txBadLen.Add(1)
			m.Free()
			continue
		}
		if wrote == free {
			break
		}
		slot := (*head + wrote) & r.mask
		off := int(slot) * r.slotSize
		l, ok := gather(r.area[off:off+r.frameMax], m)
		if !ok {
			c.txBadLen.Add(1)
			m.Free()
			continue
		}
		d := r.desc[int(slot)*descSize : int(slot+1)*descSize]
		le := binary.LittleEndian
		le.PutUint32(d[0:], uint32(off))
		le.PutUint32(d[4:], uint32(l))
		le.PutUint64(d[8:], 0)
		wrote++
		bytes += uint64(l)
		m.Free()
	}
	if wrote > 0 {
		*head += wrote
		r.head.Store(*head)
		if r.armed.Load() != 0 && r.armed.CompareAndSwap(1, 0) {
			r.bell.Add(1)
			r.wake(r.bell)
			c.txDoorbells.Add(1)
		}
	}
	c.opackets.Add(uint64(wrote))
	c.obytes.Add(bytes)
	if refused := len(pkts) - i; refused > 0 {
		c.txFull.Add(uint64(refused))
	}
	return i
}

// gather copies m's chain into dst and reports its length; false when
// the segments hold more than dst (a chain whose PktLen lies).
func gather(dst []byte, m *hw.Mbuf) (int, bool) {
	n := 0
	for seg := m; seg != nil; seg = seg.Next {
		b := seg.Data()
		if len(b) > len(dst)-n {
			return 0, false
		}
		n += copy(dst[n:], b)
	}
	return n, true
}
