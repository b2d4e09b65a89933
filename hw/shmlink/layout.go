package shmlink

import (
	"encoding/binary"
	"fmt"
)

// The region's layout. Every field is little-endian at a fixed offset so
// that the two processes (built from the same source, on one machine)
// agree without sharing Go types; indexes and flags the sides change
// while running each sit on a cache line of their own.
const (
	// magic opens the region; version changes with any layout change.
	magic   = "SVSHMLNK"
	version = 1

	headerSize = 4096
	pageSize   = 4096

	offMagic      = 0
	offVersion    = 8
	offHeaderSize = 12
	offSlots      = 16
	offSlotSize   = 20
	offMTU        = 24
	offFrameMax   = 28
	offSize       = 32 // u64
	offRing       = 40 // u64 [2]: each direction's ring block
	offArea       = 56 // u64 [2]: each direction's frame slots
	// offReady is set to 1 by the creator once the header is whole.
	offReady = 72
	// offSide is each side's block (64 bytes apart): its running flag
	// (1 between Start and Stop) and, informational only, its PID.
	offSide    = 128
	sideStride = 64

	// A direction's ring block: the producer's head, the consumer's
	// tail, the consumer's armed flag and the doorbell (a futex word),
	// then the descriptors.
	ringHead  = 0
	ringTail  = 64
	ringArmed = 128
	ringBell  = 192
	ringDesc  = 256
	// descSize is one descriptor: offset u32 (into the direction's
	// slots), length u32, flags u32 (0), reserved u32 (0), as
	// memif_desc_t's offset, length and flags.
	descSize = 16
)

// layout is where everything is in a region of a given MTU and ring
// size; both sides compute it from the same two numbers, and the
// attacher checks the header's copy against its own.
type layout struct {
	slots, slotSize, mtu, frameMax int
	ring, area                     [2]int
	size                           int
}

func alignUp(n, a int) int { return (n + a - 1) / a * a }

// newLayout lays out a region for mtu and slots (both valid).
func newLayout(mtu, slots int) layout {
	l := layout{slots: slots, mtu: mtu, frameMax: mtu + 14}
	l.slotSize = alignUp(l.frameMax, 64)
	at := headerSize
	for d := range 2 {
		l.ring[d] = at
		at += alignUp(ringDesc+slots*descSize, pageSize)
	}
	for d := range 2 {
		l.area[d] = at
		at += alignUp(slots*l.slotSize, pageSize)
	}
	l.size = at
	return l
}

// put writes the layout into header h (all but the ready flag).
func (l layout) put(h []byte) {
	le := binary.LittleEndian
	copy(h[offMagic:], magic)
	le.PutUint32(h[offVersion:], version)
	le.PutUint32(h[offHeaderSize:], headerSize)
	le.PutUint32(h[offSlots:], uint32(l.slots))
	le.PutUint32(h[offSlotSize:], uint32(l.slotSize))
	le.PutUint32(h[offMTU:], uint32(l.mtu))
	le.PutUint32(h[offFrameMax:], uint32(l.frameMax))
	le.PutUint64(h[offSize:], uint64(l.size))
	for d := range 2 {
		le.PutUint64(h[offRing+8*d:], uint64(l.ring[d]))
		le.PutUint64(h[offArea+8*d:], uint64(l.area[d]))
	}
}

// readLayout reads and checks the header of a region of fileSize bytes
// that another process wrote: a layout is accepted only when it is the
// one newLayout makes for its MTU and ring size and fits the file, so
// that no offset read from the peer is ever followed unchecked.
func readLayout(h []byte, fileSize int64) (layout, error) {
	le := binary.LittleEndian
	if len(h) < headerSize {
		return layout{}, fmt.Errorf("header: %d bytes, want %d", len(h), headerSize)
	}
	if string(h[offMagic:offMagic+len(magic)]) != magic {
		return layout{}, fmt.Errorf("not a shmlink region (magic %q, want %q)", h[offMagic:offMagic+len(magic)], magic)
	}
	if v := le.Uint32(h[offVersion:]); v != version {
		return layout{}, fmt.Errorf("layout version %d, this build speaks %d: run the same simrun on both sides", v, version)
	}
	mtu, slots := int(le.Uint32(h[offMTU:])), int(le.Uint32(h[offSlots:]))
	if mtu < 68 || mtu > MaxMTU || slots < MinSlots || slots > MaxSlots || slots&(slots-1) != 0 {
		return layout{}, fmt.Errorf("header: mtu %d, slots %d out of range", mtu, slots)
	}
	want := newLayout(mtu, slots)
	got := layout{slots: slots, mtu: mtu, slotSize: int(le.Uint32(h[offSlotSize:])),
		frameMax: int(le.Uint32(h[offFrameMax:])), size: int(le.Uint64(h[offSize:]))}
	for d := range 2 {
		got.ring[d] = int(le.Uint64(h[offRing+8*d:]))
		got.area[d] = int(le.Uint64(h[offArea+8*d:]))
	}
	if le.Uint32(h[offHeaderSize:]) != headerSize || got != want {
		return layout{}, fmt.Errorf("header: layout %+v differs from the one its mtu and slots give, %+v", got, want)
	}
	if int64(want.size) != fileSize {
		return layout{}, fmt.Errorf("region is %d bytes, its header says %d", fileSize, want.size)
	}
	return want, nil
}
