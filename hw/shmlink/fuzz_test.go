package shmlink

import (
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
)

// alignedRegion is n bytes of 8-byte aligned Go memory, standing in for
// a mapping.
func alignedRegion(n int) []byte {
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}

// FuzzRecv lets a peer write anything into the ring a port receives
// from (head, tail, armed flag, descriptors, slots): the receiver must
// never panic or read outside its slots, must hand out only frames of
// 14..MTU+14 bytes, count what it drops, and leak no mbuf.
func FuzzRecv(f *testing.F) {
	f.Add(uint32(1), []byte{0, 0, 0, 0, 60, 0, 0, 0})
	f.Add(uint32(3), []byte{0, 0, 0, 0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 60, 0, 0, 0})
	f.Add(uint32(1<<31), []byte{})
	f.Add(uint32(64), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	l := newLayout(1500, MinSlots)
	mem := alignedRegion(l.size)
	pool, err := ringdev.NewMempool("fuzz", 128, 2048)
	if err != nil {
		f.Fatal(err)
	}
	pkts := make([]*hw.Mbuf, 32)
	f.Fuzz(func(t *testing.T, head uint32, descs []byte) {
		clear(mem)
		r := newRing(mem, l, 1, func(*atomic.Uint32) {})
		copy(r.desc, descs)
		r.head.Store(head)
		var c counters
		var tail uint32
		got := 0
		for range 4 {
			n := r.recv(&tail, pkts, pool, &c)
			if n < 0 || n > len(pkts) {
				t.Fatalf("recv returned %d for a burst of %d", n, len(pkts))
			}
			for _, m := range pkts[:n] {
				if m.DataLen < 14 || m.DataLen > l.frameMax {
					t.Fatalf("a frame of %d bytes handed out", m.DataLen)
				}
				m.Free()
			}
			got += n
		}
		if c.ipackets.Load() != uint64(got) {
			t.Fatalf("ipackets %d, handed out %d", c.ipackets.Load(), got)
		}
		if tail-0 > uint32(l.slots) && c.rxBadIndex.Load() == 0 {
			t.Fatalf("tail moved %d on a ring of %d without a bad index", tail, l.slots)
		}
		if pool.Stats().InUse != 0 {
			t.Fatalf("%d mbufs leaked", pool.Stats().InUse)
		}
	})
}

// FuzzReadLayout reads any header: an attacher accepts only a layout
// that newLayout makes and that fits the file, and never panics.
func FuzzReadLayout(f *testing.F) {
	good := alignedRegion(headerSize)
	newLayout(1500, DefaultSlots).put(good)
	f.Add(append([]byte(nil), good[:128]...), int64(newLayout(1500, DefaultSlots).size))
	f.Add([]byte("SVSHMLNK"), int64(4096))
	f.Fuzz(func(t *testing.T, h []byte, size int64) {
		buf := make([]byte, headerSize)
		copy(buf, h)
		l, err := readLayout(buf, size)
		if err != nil {
			return
		}
		if l != newLayout(l.mtu, l.slots) || int64(l.size) != size {
			t.Fatalf("accepted %+v for a file of %d bytes", l, size)
		}
	})
}
