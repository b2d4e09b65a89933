package zlibshim_test

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/klauspost/compress/flate"

	"github.com/savanna-sim/savanna/hw"
)

// fakeService is a test-only hw.CompressService with one device whose
// faults the specs set precisely: which requests fail, hang or are reset,
// and whether instances and pinned memory can be had.
type fakeService struct {
	dev         *fakeDev
	instances   int // free instances
	pinnedLimit int // bytes
	pinnedUsed  int
	noInstance  bool
	noPinned    bool
	down        bool
	attached    int
	exited      []hw.ProcessID
}

type fakeInst struct {
	dev *fakeDev
	qp  int
}

func (i *fakeInst) Device() hw.CompressDev { return i.dev }
func (i *fakeInst) QueuePair() int         { return i.qp }
func (i *fakeInst) NUMANode() int          { return 0 }
func (i *fakeInst) Name() string           { return fmt.Sprintf("fake/inst%d", i.qp) }

// fakeDev completes each op Latency after it was enqueued, by the meter.
type fakeDev struct {
	meter    *hw.CountingMeter
	latency  time.Duration
	queue    []fakeEntry
	failNext int  // fail this many next ops with StatusError
	hang     bool // ops enqueued while set never complete
	reset    bool // ops complete with "device reset"
	crc      bool // computes checksums
	ops      int
	stats    hw.CompressStats
	writers  map[int]*flate.Writer
}

type fakeEntry struct {
	op   *hw.CompOp
	at   time.Duration
	hung bool
}

func newFake(m *hw.CountingMeter) *fakeService {
	return &fakeService{
		dev:         &fakeDev{meter: m, latency: 20 * time.Microsecond, crc: true},
		instances:   4,
		pinnedLimit: 8 << 20,
	}
}

func (s *fakeService) Attach(pid hw.ProcessID, node int) (hw.CompressInstance, error) {
	switch {
	case s.down:
		return nil, fmt.Errorf("fake: %w", hw.ErrDeviceDown)
	case s.noInstance || s.attached >= s.instances:
		return nil, fmt.Errorf("fake: %d attached: %w", s.attached, hw.ErrNoInstance)
	}
	s.attached++
	return &fakeInst{dev: s.dev, qp: 0}, nil
}

func (s *fakeService) Detach(pid hw.ProcessID, inst hw.CompressInstance) error {
	s.attached--
	return nil
}

func (s *fakeService) AllocPinned(pid hw.ProcessID, size int, node int) (*hw.PinnedBuffer, error) {
	if s.noPinned || s.pinnedUsed+size > s.pinnedLimit {
		return nil, fmt.Errorf("fake: %d of %d bytes used: %w", s.pinnedUsed, s.pinnedLimit, hw.ErrNoPinnedMemory)
	}
	s.pinnedUsed += size
	return &hw.PinnedBuffer{Bytes: make([]byte, size), Owner: pid}, nil
}

func (s *fakeService) FreePinned(b *hw.PinnedBuffer) error {
	s.pinnedUsed -= len(b.Bytes)
	return nil
}

func (s *fakeService) Exit(pid hw.ProcessID) { s.exited = append(s.exited, pid) }

func (d *fakeDev) Capabilities() hw.CompressCapabilities {
	return hw.CompressCapabilities{DriverName: "fake", CRC32: d.crc, Adler32: d.crc, DynamicHuffman: true, FixedHuffman: true, MaxLevel: 9, MinWindowLog: 8, MaxWindowLog: 15}
}

func (d *fakeDev) Stats() hw.CompressStats { return d.stats }

func (d *fakeDev) EnqueueBurst(qp int, ops []*hw.CompOp) int {
	for _, op := range ops {
		d.ops++
		e := fakeEntry{op: op, at: d.meter.Now() + d.latency, hung: d.hang}
		switch {
		case d.reset:
			op.Status, op.Debug = hw.StatusError, "device reset"
		case d.failNext > 0:
			d.failNext--
			op.Status, op.Debug = hw.StatusError, "injected engine error"
		case !e.hung:
			d.run(op)
		}
		d.queue = append(d.queue, e)
		d.stats.EnqueuedCount++
	}
	return len(ops)
}

// run compresses as the device would: a fresh raw deflate stream of Src
// ending in a sync flush, or a final block.
func (d *fakeDev) run(op *hw.CompOp) {
	var b bytes.Buffer
	lvl := max(1, op.Xform.Level)
	if d.writers == nil {
		d.writers = map[int]*flate.Writer{}
	}
	w := d.writers[lvl]
	if w == nil {
		w, _ = flate.NewWriter(&b, lvl)
		d.writers[lvl] = w
	}
	w.Reset(&b)
	_, _ = w.Write(op.Src)
	if op.Flush == hw.FlushFinal {
		_ = w.Close()
	} else {
		_ = w.Flush()
	}
	if b.Len() > len(op.Dst) {
		op.Status = hw.StatusOutOfSpaceTerminated
		return
	}
	op.Produced = copy(op.Dst, b.Bytes())
	op.Consumed = len(op.Src)
	op.Status = hw.StatusSuccess
	switch op.Xform.Checksum {
	case hw.ChecksumCRC32:
		op.Checksum = crc32.Update(op.InputChecksum, crc32.IEEETable, op.Src)
	case hw.ChecksumAdler32:
		op.Checksum = adlerUpdate(op.InputChecksum, op.Src)
	}
}

func adlerUpdate(a uint32, p []byte) uint32 {
	s1, s2 := a&0xffff, a>>16
	for _, c := range p {
		s1 = (s1 + uint32(c)) % 65521
		s2 = (s2 + s1) % 65521
	}
	return s2<<16 | s1
}

func (d *fakeDev) DequeueBurst(qp int, ops []*hw.CompOp) int {
	n := 0
	for n < len(ops) && len(d.queue) > 0 {
		e := d.queue[0]
		if e.hung || e.at > d.meter.Now() {
			break
		}
		ops[n] = e.op
		n++
		d.queue = d.queue[1:]
		d.stats.DequeuedCount++
	}
	return n
}

// clearHang lets hung ops complete (with an error, as a timed-out request
// does on a real driver).
func (d *fakeDev) clearHang() {
	d.hang = false
	for i := range d.queue {
		if d.queue[i].hung {
			d.queue[i].hung = false
			d.queue[i].op.Status, d.queue[i].op.Debug = hw.StatusError, "timed out"
		}
	}
}
