package zlibshim

import (
	"strings"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// minPollStep is idled after an empty poll that did not move the meter's
// clock, so that a device model completing at a virtual time is reached
// even under a meter whose clock moves only when idled (hw.CountingMeter).
const minPollStep = time.Microsecond

// maxEnqueueTries bounds the retries of a refused enqueue: a full ring
// drains only as completions are dequeued, which the retries do.
const maxEnqueueTries = 16

// dstBound is the destination size for n bytes of input: deflate's worst
// case is stored blocks (5 bytes per 65535) or fixed Huffman at 9 bits a
// byte, both within n/8 + a little.
func dstBound(n int) int { return n + n/8 + 1024 }

// instance returns the instance the stream's requests go to, attaching
// one if needed.
func (d *Deflater) instance() (hw.CompressInstance, Reason) {
	p := d.p
	if !p.cfg.InstancePerStream {
		if p.inst == nil {
			inst, r := p.attach()
			if r != ReasonNone {
				return nil, r
			}
			p.inst = inst
		}
		return p.inst, ReasonNone
	}
	if d.inst == nil {
		inst, r := p.attach()
		if r != ReasonNone {
			return nil, r
		}
		d.inst = inst
		d.entry.inst = true
	}
	return d.inst, ReasonNone
}

// dropInstance gives up the instance after a hang or a device failure,
// so that the next try attaches afresh.
func (d *Deflater) dropInstance() {
	p := d.p
	if !p.cfg.InstancePerStream {
		if p.inst != nil {
			p.detach(p.inst)
			p.inst = nil
		}
		return
	}
	if d.inst != nil {
		p.detach(d.inst)
		d.inst = nil
		d.entry.inst = false
	}
}

// ensurePinned takes the stream's pinned source and destination buffers.
func (d *Deflater) ensurePinned(node int) Reason {
	p := d.p
	rs := p.cfg.RequestSize
	if d.src == nil {
		b, r := p.allocPinned(rs, node)
		if r != ReasonNone {
			return r
		}
		d.src = b
		d.entry.pinned += int64(len(b.Bytes))
	}
	if d.dst == nil {
		b, r := p.allocPinned(dstBound(rs), node)
		if r != ReasonNone {
			return r
		}
		d.dst = b
		d.entry.pinned += int64(len(b.Bytes))
	}
	return ReasonNone
}

// quarantine hands the stream's pinned buffers to the process: a hung
// request's device may still write them.
func (d *Deflater) quarantine(opID uint64, inst hw.CompressInstance) {
	d.p.quarantine[opID] = quarantined{inst: inst, bufs: []*hw.PinnedBuffer{d.src, d.dst}}
	d.src, d.dst = nil, nil
	d.entry.pinned = 0
}

// hwRequest runs one stateless request on the device: data is copied
// into the pinned source buffer, submitted with flag, and the completion
// awaited. On success the deflate output is appended to the stream and
// served is true; sum is the device's checksum when hwSum. On failure the
// stream is untouched (nothing appended: the caller redoes the request in
// software, so no byte is lost or doubled) and the failure is counted;
// err is set only under hardware-only.
func (d *Deflater) hwRequest(data []byte, flag hw.FlushFlag, ck hw.ChecksumType, seed uint32) (served bool, sum uint32, hwSum bool, err error) {
	p := d.p
	inst, r := d.instance()
	if r != ReasonNone {
		return false, 0, false, p.hwFailed(r, "attach instance")
	}
	if r := d.ensurePinned(inst.NUMANode()); r != ReasonNone {
		return false, 0, false, p.hwFailed(r, "allocate pinned buffer")
	}
	dev := inst.Device()
	caps := dev.Capabilities()
	if caps.FinalOnlyStateless && flag != hw.FlushFinal {
		// The device would end the stream here: this request cannot be
		// joined to the next, so software serves it (not a failure).
		p.stats.UnsupportedRequests++
		return false, 0, false, nil
	}
	switch {
	case ck == hw.ChecksumCRC32 && !caps.CRC32, ck == hw.ChecksumAdler32 && !caps.Adler32:
		ck = hw.ChecksumNone
	}
	n := copy(d.src.Bytes, data)
	p.meter.Charge(hw.CostCopyByte, int64(n))
	p.stats.StagedBytes += uint64(n)
	huff := hw.HuffmanDynamic
	if d.strategy == Fixed {
		huff = hw.HuffmanFixed
	}
	op := &hw.CompOp{
		Type: hw.OpStateless,
		Xform: hw.Xform{
			Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: d.level,
			Huffman: huff, Checksum: ck, WindowLog: MaxWBits,
		},
		Flush:         flag,
		Src:           d.src.Bytes[:n],
		Dst:           d.dst.Bytes,
		InputChecksum: seed,
	}
	if r := d.submit(inst, op); r != ReasonNone {
		if r == ReasonTimeout || r == ReasonDeviceDown {
			d.dropInstance()
		}
		return false, 0, false, p.hwFailed(r, "compress request")
	}
	// Success: end any software part at a byte boundary, then append.
	if d.sw.open {
		_ = d.sw.w.Flush()
		d.sw.open = false
	}
	d.sw.needReset = true
	d.out = append(d.out, d.dst.Bytes[:op.Produced]...)
	p.meter.Charge(hw.CostCopyByte, int64(op.Produced))
	p.stats.HWRequests++
	p.stats.HWBytesIn += uint64(n)
	p.stats.HWBytesOut += uint64(op.Produced)
	p.hwServed()
	if ck != hw.ChecksumNone {
		p.stats.HWChecksums++
		return true, op.Checksum, true, nil
	}
	return true, 0, false, nil
}

// submit enqueues op and waits for its completion, polling or, in thread
// mode on a device that can, sleeping. It returns ReasonNone when op
// completed in full.
func (d *Deflater) submit(inst hw.CompressInstance, op *hw.CompOp) Reason {
	p := d.p
	dev, qp := inst.Device(), inst.QueuePair()
	p.nextOp++
	op.UserData = p.nextOp
	d.opv[0] = op
	defer func() { d.opv[0] = nil }()
	start := p.meter.Now()
	for tries := 0; dev.EnqueueBurst(qp, d.opv[:]) == 0; tries++ {
		// Refused. The shim has at most one request in flight per
		// stream, so a full ring means hung requests clog it; with
		// none of ours hung, the device is not taking work (reset,
		// heartbeat failure): compressdev says no more than that.
		before := p.meter.Now()
		p.poll(dev, qp, 0)
		if p.meter.Now()-start >= p.cfg.Timeout || tries >= maxEnqueueTries {
			if p.hungOn(inst) {
				return ReasonEnqueueRefused
			}
			return ReasonDeviceDown
		}
		p.pollPause(before)
	}
	waiter, canWait := dev.(hw.CompletionWaiter)
	thread := p.cfg.Completion == CompletionThread && canWait
	for polls := 0; ; polls++ {
		if thread {
			left := p.cfg.Timeout - (p.meter.Now() - start)
			if left > 0 {
				p.stats.Waits++
				p.stats.Syscalls += 2 // futex wait, futex wake
				waiter.WaitCompletion(qp, left)
			}
		}
		before := p.meter.Now()
		if p.poll(dev, qp, op.UserData) {
			return opReason(op)
		}
		if p.meter.Now()-start >= p.cfg.Timeout || polls >= p.cfg.MaxPolls {
			d.quarantine(op.UserData, inst)
			return ReasonTimeout
		}
		if !thread {
			p.pollPause(before)
		}
	}
}

// pollPause idles between polls: the configured interval, or a minimal
// step when the poll did not move the clock.
func (p *Process) pollPause(before time.Duration) {
	switch {
	case p.cfg.PollInterval > 0:
		p.meter.Idle(p.cfg.PollInterval)
	case p.meter.Now() == before:
		p.meter.Idle(minPollStep)
	}
}

// poll dequeues completions from qp and reports whether the one with
// UserData id was among them; others are late completions.
func (p *Process) poll(dev hw.CompressDev, qp int, id uint64) bool {
	n := dev.DequeueBurst(qp, p.deq[:])
	p.stats.Polls++
	if n == 0 {
		p.stats.EmptyPolls++
	}
	found := false
	for i := range min(n, len(p.deq)) {
		op := p.deq[i]
		p.deq[i] = nil
		switch {
		case op == nil:
		case id != 0 && op.UserData == id:
			found = true
		default:
			p.lateCompletion(op)
		}
	}
	return found
}

// opReason judges a completed operation.
func opReason(op *hw.CompOp) Reason {
	switch op.Status {
	case hw.StatusSuccess:
		if op.Consumed != len(op.Src) || op.Produced < 0 || op.Produced > len(op.Dst) {
			return ReasonOverflow
		}
		return ReasonNone
	case hw.StatusOutOfSpaceTerminated, hw.StatusOutOfSpaceRecoverable:
		return ReasonOverflow
	}
	// A request failed by a device reset says so in its debug string;
	// the instance must then be given up.
	if strings.Contains(strings.ToLower(op.Debug), "reset") || strings.Contains(strings.ToLower(op.Debug), "down") {
		return ReasonDeviceDown
	}
	return ReasonEngineError
}
