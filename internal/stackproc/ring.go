package stackproc

import (
	"sync/atomic"
)

// ByteRing is one side's view of a socket's SPSC byte ring in the
// memfd: head and tail are free-running byte counters on cache lines of
// their own, data is the ring's storage (a power of two). The producer
// stores only tail, the consumer only head.
type ByteRing struct {
	head, tail *atomic.Uint64
	data       []byte
	mask       uint64
}

func (m *Mem) ring(headOff, tailOff, dataOff int) ByteRing {
	n := m.g.Ring
	return ByteRing{head: m.u64(headOff), tail: m.u64(tailOff), data: m.b[dataOff : dataOff+n : dataOff+n], mask: uint64(n - 1)}
}

// RxRing is slot i's receive ring (the stack produces, the app consumes).
func (m *Mem) RxRing(i int) ByteRing {
	s := m.g.slot(i)
	return m.ring(s+sRxHead, s+sRxTail, m.g.rxData(i))
}

// TxRing is slot i's send ring (the app produces, the stack consumes).
func (m *Mem) TxRing(i int) ByteRing {
	s := m.g.slot(i)
	return m.ring(s+sTxHead, s+sTxTail, m.g.txData(i))
}

// Len is the bytes produced and not consumed.
func (r ByteRing) Len() int { return int(r.tail.Load() - r.head.Load()) }

// Space is the free bytes.
func (r ByteRing) Space() int { return len(r.data) - r.Len() }

// Writable is the first contiguous free region (producer).
func (r ByteRing) Writable() []byte {
	t := r.tail.Load()
	free := uint64(len(r.data)) - (t - r.head.Load())
	off := t & r.mask
	return r.data[off : off+min(free, uint64(len(r.data))-off)]
}

// Commit publishes n bytes written into Writable's region (producer).
func (r ByteRing) Commit(n int) { r.tail.Add(uint64(n)) }

// Readable is the first contiguous region produced (consumer).
func (r ByteRing) Readable() []byte {
	h := r.head.Load()
	used := r.tail.Load() - h
	off := h & r.mask
	return r.data[off : off+min(used, uint64(len(r.data))-off)]
}

// Consume releases n bytes of Readable's region (consumer).
func (r ByteRing) Consume(n int) { r.head.Add(uint64(n)) }

// Write copies as much of p as fits (producer) and returns the count.
func (r ByteRing) Write(p []byte) int {
	total := 0
	for len(p) > 0 {
		w := r.Writable()
		if len(w) == 0 {
			break
		}
		n := copy(w, p)
		r.Commit(n)
		p, total = p[n:], total+n
	}
	return total
}

// Read copies up to len(p) bytes out (consumer) and returns the count.
func (r ByteRing) Read(p []byte) int {
	total := 0
	for len(p) > 0 {
		b := r.Readable()
		if len(b) == 0 {
			break
		}
		n := copy(p, b)
		r.Consume(n)
		p, total = p[n:], total+n
	}
	return total
}

// recRing is a control ring of fixed SV_REC-byte records: head and
// tail count records; ev is the futex word its consumer waits on, bumped
// by the producer, and waiters the consumer's count of blocked threads.
type recRing struct {
	m           *Mem
	off         int
	head, tail  *atomic.Uint64
	ev, waiters *atomic.Uint32
	mask        uint64
}

func (m *Mem) recRing(off int) recRing {
	return recRing{m: m, off: off, head: m.u64(off + rHead), tail: m.u64(off + rTail),
		ev: m.u32(off + rEv), waiters: m.u32(off + rWaiters), mask: uint64(m.g.Recs - 1)}
}

// rec returns record number n's bytes.
func (r recRing) rec(n uint64) []byte {
	o := r.off + rRecs + int(n&r.mask)*recSize
	return r.m.b[o : o+recSize : o+recSize]
}
