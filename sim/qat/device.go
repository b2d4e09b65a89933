package qat

import (
	"fmt"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// Device is one QAT device: its engines, and one queue pair per instance.
// It implements hw.CompressDev and hw.CompletionWaiter; a queue pair's
// operations run on the time of the process holding its instance.
type Device struct {
	svc     *Service
	index   int
	name    string
	model   DeviceModel
	driver  Driver
	pattern SyscallPattern
	mode    CompletionMode
	node    int
	vfs     int

	latency      time.Duration
	compressPS   int64 // picoseconds per input byte on one engine
	decompressPS int64 // picoseconds per output byte on one engine
	engines      []engine
	qps          []*queuePair
	codec        *codec

	faults   faultState
	counters DeviceCounters
	hwstats  hw.CompressStats
}

// engine is one compression engine (slice): it serves requests one at a
// time, in the order they reach it.
type engine struct {
	freeAt time.Duration
	stats  EngineStats
}

// pending is a request in a queue pair's rings: enqueued and not yet
// dequeued.
type pending struct {
	op     *hw.CompOp
	done   time.Duration // when its response is on the response ring
	hung   bool          // it will not complete while the hang lasts
	failed bool          // a fault failed it
}

// queuePair is one instance's request and response rings, a circular
// buffer of ring-depth pending requests kept in submission order.
type queuePair struct {
	index, vf int
	owner     *process
	inst      *Instance
	ring      []pending
	head, n   int
	// streamOpen says a compression (0) or decompression (1) stream has
	// begun and not yet ended with FlushFinal.
	streamOpen [2]bool
	inflater   *inflater
	stats      QueuePairStats
}

func (q *queuePair) at(i int) *pending { return &q.ring[(q.head+i)%len(q.ring)] }

func (q *queuePair) push(p pending) {
	q.ring[(q.head+q.n)%len(q.ring)] = p
	q.n++
}

func (q *queuePair) pop() *hw.CompOp {
	e := &q.ring[q.head]
	op := e.op
	*e = pending{}
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	return op
}

// clear drops every pending request (the instance was given back) and
// returns how many there were.
func (q *queuePair) clear() int {
	n := q.n
	for q.n > 0 {
		q.pop()
	}
	q.streamOpen = [2]bool{}
	q.inflater.reset()
	return n
}

// newDevice builds a device from a validated configuration.
func newDevice(s *Service, index int, cfg DeviceConfig) (*Device, error) {
	m, err := ModelByName(cfg.Model)
	if err != nil {
		return nil, err
	}
	d := &Device{svc: s, index: index, name: cfg.name(index), model: m, node: cfg.NUMANode, vfs: cfg.VFs}
	d.driver = cfg.Driver
	if d.driver == "" {
		d.driver = DriverOOT40052
	}
	d.pattern = d.driver.Pattern()
	d.mode = cfg.Completion
	if d.mode == "" {
		d.mode = Polling
	}
	instances := cfg.Instances
	if instances == 0 {
		instances = d.pattern.DefaultInstances
	}
	depth := cfg.RingDepth
	if depth == 0 {
		depth = 512
	}
	engines := cfg.Engines
	if engines == 0 {
		engines = int(m.Engines.Value)
	}
	cgbps, dgbps := cfg.CompressGbps, cfg.DecompressGbps
	if cgbps == 0 {
		cgbps = m.CompressGbps.Value
	}
	if dgbps == 0 {
		dgbps = m.DecompressGbps.Value
	}
	d.latency = cfg.Latency
	if d.latency == 0 {
		d.latency = m.Latency()
	}
	// One engine runs at gbps/engines; a byte takes 8/(that) ns.
	d.compressPS = int64(8000*float64(engines)/cgbps + 0.5)
	d.decompressPS = int64(8000*float64(engines)/dgbps + 0.5)
	d.engines = make([]engine, engines)
	d.qps = make([]*queuePair, instances)
	for i := range d.qps {
		q := &queuePair{index: i, vf: -1, ring: make([]pending, depth)}
		if d.vfs > 0 {
			q.vf = i % d.vfs
		}
		d.qps[i] = q
	}
	d.codec = newCodec()
	return d, nil
}

// Name is the device's name ("qat0").
func (d *Device) Name() string { return d.name }

// Model is the device's preset.
func (d *Device) Model() DeviceModel { return d.model }

// Driver is the device's driver generation.
func (d *Device) Driver() Driver { return d.driver }

// NUMANode is the node the device sits on.
func (d *Device) NUMANode() int { return d.node }

// Instances is the size of the device section.
func (d *Device) Instances() int { return len(d.qps) }

// ServiceTime is the time one engine takes for a request of n bytes
// (input bytes when compressing, output bytes when decompressing): the
// fixed latency plus the bytes over one engine's share of the throughput.
func (d *Device) ServiceTime(n int, decompress bool) time.Duration {
	ps := d.compressPS
	if decompress {
		ps = d.decompressPS
	}
	return d.latency + time.Duration(int64(n)*ps/1000)
}

// Engines is the number of engines.
func (d *Device) Engines() int { return len(d.engines) }

// Capabilities implements hw.CompressDev. QAT does deflate with fixed
// and dynamic Huffman, CRC32 and Adler-32, and stateful decompression;
// it accepts zlib levels 1..9 and maps them to its own (HardwareLevel).
func (d *Device) Capabilities() hw.CompressCapabilities {
	name := d.model.DriverName
	if d.vfs > 0 {
		name += "vf"
	}
	return hw.CompressCapabilities{
		DriverName: name, NUMANode: d.node, MaxQueuePairs: len(d.qps),
		Stateful: true, FixedHuffman: true, DynamicHuffman: true, CRC32: true, Adler32: true,
		MinWindowLog: 8, MaxWindowLog: 15, MaxLevel: 9,
	}
}

// Stats implements hw.CompressDev.
func (d *Device) Stats() hw.CompressStats { return d.hwstats }

// queuePair returns qp's queue pair and the process holding it, counting
// a bad index or an instance no one holds.
func (d *Device) queuePair(qp int, n int) (*queuePair, *process) {
	if qp < 0 || qp >= len(d.qps) {
		d.counters.InvalidQueuePair += uint64(n)
		return nil, nil
	}
	q := d.qps[qp]
	if q.owner == nil {
		d.counters.UnattachedQueuePair += uint64(n)
		return nil, nil
	}
	return q, q.owner
}

// EnqueueBurst implements hw.CompressDev. Each op is processed at once
// (its bytes are real) and becomes visible to DequeueBurst when the
// service-time model says the engine finished it. A full ring takes
// fewer ops; a device that is down takes none.
func (d *Device) EnqueueBurst(qp int, ops []*hw.CompOp) int {
	if len(ops) == 0 {
		return 0
	}
	q, p := d.queuePair(qp, len(ops))
	if q == nil {
		d.hwstats.EnqueueErrCount += uint64(len(ops))
		return 0
	}
	timed, now := d.svc.timed(p), d.svc.now(p)
	if down, _ := d.down(now, timed); down {
		d.counters.EnqueueRefusedDown += uint64(len(ops))
		d.hwstats.EnqueueErrCount += uint64(len(ops))
		return 0
	}
	taken := 0
	for _, op := range ops {
		if op == nil {
			d.counters.Errors.InvalidArgs++
			break
		}
		if q.n == len(q.ring) {
			break
		}
		d.submit(q, p, op, now)
		taken++
	}
	if refused := len(ops) - taken; refused > 0 {
		d.counters.RingFull += uint64(refused)
		q.stats.RingFull += uint64(refused)
		d.hwstats.EnqueueErrCount += uint64(refused)
	}
	d.svc.charge(p, hw.CostQATSubmit, int64(taken))
	return taken
}

// submit processes one op and schedules its completion.
func (d *Device) submit(q *queuePair, p *process, op *hw.CompOp, now time.Duration) {
	dir := 0
	if op.Xform.Kind == hw.XformDecompress {
		dir = 1
	}
	if !q.streamOpen[dir] {
		q.streamOpen[dir] = true
		d.counters.Streams++
		d.svc.syscalls(p, d, sysOpen, d.pattern.PerStreamOpen)
		d.svc.syscalls(p, d, sysIoctl, d.pattern.PerStreamIoctl)
	}
	if op.Flush == hw.FlushFinal {
		q.streamOpen[dir] = false
	}
	var in, out int
	if dir == 0 {
		in, out = d.codec.compress(op, d.model.Generation)
	} else {
		if q.inflater == nil {
			q.inflater = newInflater() // lazily: 40 KiB each, and most instances never inflate
		}
		in, out = d.codec.decompress(q.inflater, op)
		if op.Status == hw.StatusSuccess && q.inflater.done() {
			q.inflater.reset()
			q.streamOpen[1] = false
		}
	}
	d.countStatus(op)
	if op.Status == hw.StatusSuccess && d.faults.errorRate > 0 && d.svc.rng.Float64() < d.faults.errorRate {
		setError(op, "engine error (injected fault)")
		d.counters.Errors.Engine++
		if dir == 1 {
			q.inflater.reset()
		}
	}
	// Service time: the engine that frees first takes it (lowest index on
	// a tie, so the choice is deterministic).
	bytes, ps := in, d.compressPS
	if dir == 1 {
		bytes, ps = out, d.decompressPS
	}
	svc := d.latency + time.Duration(int64(bytes)*ps/1000)
	best := 0
	for i := range d.engines {
		if d.engines[i].freeAt < d.engines[best].freeAt {
			best = i
		}
	}
	e := &d.engines[best]
	start := max(now, e.freeAt)
	done := start + svc
	wait := start - now
	e.freeAt = done
	e.stats.Requests++
	e.stats.BytesIn += uint64(op.Consumed)
	e.stats.BytesOut += uint64(op.Produced)
	e.stats.Busy += svc
	e.stats.QueueWait += wait
	e.stats.MaxQueueWait = max(e.stats.MaxQueueWait, wait)
	if op.Status != hw.StatusSuccess {
		e.stats.Errors++
	}
	ent := pending{op: op, done: done, hung: d.faults.hung}
	if ent.hung {
		d.counters.HungRequests++
	}
	q.push(ent)
	d.hwstats.EnqueuedCount++
	d.counters.Requests.add(dir, 1)
	d.counters.BytesIn.add(dir, uint64(op.Consumed))
	d.counters.BytesOut.add(dir, uint64(op.Produced))
	q.stats.Enqueued++
	q.stats.MaxInFlight = max(q.stats.MaxInFlight, q.n)
	d.counters.InFlight++
	d.counters.MaxInFlight = max(d.counters.MaxInFlight, d.counters.InFlight)
	if p != nil {
		p.stats.Requests++
	}
}

// countStatus counts an op's outcome by kind.
func (d *Device) countStatus(op *hw.CompOp) {
	switch op.Status {
	case hw.StatusSuccess:
	case hw.StatusInvalidArgs:
		d.counters.Errors.InvalidArgs++
	case hw.StatusOutOfSpaceTerminated, hw.StatusOutOfSpaceRecoverable:
		d.counters.Errors.OutOfSpace++
	default:
		d.counters.Errors.Corrupt++
	}
}

// DequeueBurst implements hw.CompressDev: the ops of qp whose completion
// time has come, in submission order. A poll that finds something costs
// hw.CostQATPoll, one that finds nothing hw.CostQATPollIdle.
func (d *Device) DequeueBurst(qp int, ops []*hw.CompOp) int {
	q, p := d.queuePair(qp, 0)
	if q == nil || len(ops) == 0 {
		return 0
	}
	timed, now := d.svc.timed(p), d.svc.now(p)
	n := 0
	for n < len(ops) && q.n > 0 {
		e := q.at(0)
		if e.hung || (timed && e.done > now) {
			break
		}
		op := q.pop()
		ops[n] = op
		n++
		d.hwstats.DequeuedCount++
		if op.Status != hw.StatusSuccess {
			d.hwstats.DequeueErrCount++
		}
		q.stats.Dequeued++
		d.counters.InFlight--
	}
	if n > 0 {
		d.counters.Polls++
		d.svc.charge(p, hw.CostQATPoll, 1)
	} else {
		d.counters.IdlePolls++
		d.svc.charge(p, hw.CostQATPollIdle, 1)
	}
	return n
}

// maxSpin bounds the idle polls of one WaitCompletion in polling mode.
const maxSpin = 1 << 20

// WaitCompletion implements hw.CompletionWaiter. In thread mode the
// caller sleeps on a futex until the driver's completion thread wakes it:
// a futex wait, a context switch, then (when a completion came) a futex
// wake and a wake-up, and the caller's time moves to the completion
// without work (Meter.Idle). In polling mode the caller spins on the
// response ring, each turn costing hw.CostQATPollIdle. Either way it
// returns whether qp has a completion to dequeue.
func (d *Device) WaitCompletion(qp int, timeout time.Duration) bool {
	q, p := d.queuePair(qp, 0)
	if q == nil {
		return false
	}
	headReady := func(at time.Duration, timed bool) (bool, time.Duration) {
		if q.n == 0 || q.at(0).hung {
			return false, 0
		}
		e := q.at(0)
		return !timed || e.done <= at, e.done
	}
	timed := d.svc.timed(p)
	now := d.svc.now(p)
	if ok, _ := headReady(now, timed); ok || !timed || p.meter == nil {
		return ok
	}
	deadline := now + max(timeout, 0)
	ready, due := headReady(deadline, true)
	target := deadline
	if ready {
		target = due
	}
	m := p.meter
	if d.svc.modeOf(p, d) == Thread {
		d.svc.syscalls(p, d, sysFutex, 1) // futex wait
		d.svc.charge(p, hw.CostContextSwitch, 1)
		d.counters.ContextSwitches++
		if gap := target - m.Now(); gap > 0 {
			m.Idle(gap)
		}
		if ready {
			d.svc.syscalls(p, d, sysFutex, 1) // the completion thread's futex wake
			d.svc.charge(p, hw.CostWakeup, 1)
			d.counters.Wakeups++
		} else {
			d.counters.WaitTimeouts++
		}
		return ready
	}
	for i := 0; i < maxSpin && m.Now() < target; i++ {
		before := m.Now()
		m.Charge(hw.CostQATPollIdle, 1)
		d.counters.IdlePolls++
		if m.Now() == before {
			// A meter whose clock charges do not move (a counting meter):
			// the spin's length cannot be told, so let the time pass.
			m.Idle(target - before)
			break
		}
	}
	if m.Now() < target {
		m.Idle(target - m.Now())
	}
	if !ready {
		d.counters.WaitTimeouts++
	}
	return ready
}

// Instance is a compression instance held by a process: one queue pair
// of a Device. It implements hw.CompressInstance.
type Instance struct {
	dev *Device
	qp  *queuePair
	pid hw.ProcessID
}

// Device implements hw.CompressInstance.
func (i *Instance) Device() hw.CompressDev { return i.dev }

// QueuePair implements hw.CompressInstance.
func (i *Instance) QueuePair() int { return i.qp.index }

// NUMANode implements hw.CompressInstance.
func (i *Instance) NUMANode() int { return i.dev.node }

// Name implements hw.CompressInstance: "qat0/inst12", or with VFs
// "qat0/vf3/inst12".
func (i *Instance) Name() string {
	if i.qp.vf >= 0 {
		return fmt.Sprintf("%s/vf%d/inst%d", i.dev.name, i.qp.vf, i.qp.index)
	}
	return fmt.Sprintf("%s/inst%d", i.dev.name, i.qp.index)
}

// QATDevice returns the model's device, for fault injection and stats.
func (i *Instance) QATDevice() *Device { return i.dev }
