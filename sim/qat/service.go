package qat

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// Options are what a Service needs from its surroundings.
type Options struct {
	// Memory is the host's hugepage memory that USDM takes its pages
	// from. Nil: USDM only accounts pages against its own limits.
	Memory hw.HugeMemory
	// RNG draws engine errors. Nil: a fixed stream (the wiring should hand
	// in eng.RNG("qat/<host>")).
	RNG *rand.Rand
	// Clock gives the time of processes not bound to a meter. Nil: such
	// processes are untimed and their requests complete at once.
	Clock func() time.Duration
}

// Service is the QAT driver as one host's processes see it: its devices,
// their instances, and USDM pinned memory. It implements
// hw.CompressService.
type Service struct {
	cfg     Config
	legacy  LegacyConfig
	mem     hw.HugeMemory
	rng     *rand.Rand
	clock   func() time.Duration
	devices []*Device
	procs   map[hw.ProcessID]*process
	pools   map[int]*usdmPool  // USDM pool by node
	frag    map[int]*fragState // kernel fragmentation by node (legacy driver)
	bufs    map[uintptr]*pinned
	handle  uintptr
	iova    uint64

	counters ServiceCounters
}

// process is what the driver knows of one process.
type process struct {
	pid    hw.ProcessID
	meter  hw.Meter
	mode   CompletionMode // "" = the device's
	insts  []*Instance
	bufs   map[uintptr]*pinned
	pages  map[int][]*usdmPage // USDM pages it holds, by node
	exited bool
	stats  ProcessStats
}

// NewService builds the QAT devices of a host. cfg must be valid.
func NewService(cfg Config, opts Options) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("qat: %w", err)
	}
	s := &Service{
		cfg: cfg, legacy: cfg.Legacy.withDefaults(), mem: opts.Memory, rng: opts.RNG, clock: opts.Clock,
		procs: map[hw.ProcessID]*process{}, pools: map[int]*usdmPool{}, frag: map[int]*fragState{},
		bufs: map[uintptr]*pinned{}, iova: 1 << 40,
	}
	if s.rng == nil {
		s.rng = rand.New(rand.NewPCG(1, 0x9a7))
	}
	for i, dc := range cfg.Devices {
		d, err := newDevice(s, i, dc)
		if err != nil {
			return nil, fmt.Errorf("qat: devices[%d]: %w", i, err)
		}
		s.devices = append(s.devices, d)
		if _, ok := s.pools[dc.NUMANode]; !ok || dc.USDM != (USDMConfig{}) {
			s.pools[dc.NUMANode] = &usdmPool{node: dc.NUMANode, cfg: dc.USDM.withDefaults()}
		}
		for j, f := range dc.Faults {
			if err := d.InjectFault(f.Kind, FaultParams{Rate: f.Rate, Instances: f.Instances, Delay: f.Delay}); err != nil {
				return nil, fmt.Errorf("qat: devices[%d].faults[%d]: %w", i, j, err)
			}
		}
	}
	return s, nil
}

// Devices returns the devices in configuration order.
func (s *Service) Devices() []*Device { return append([]*Device(nil), s.devices...) }

// Device finds a device by name.
func (s *Service) Device(name string) (*Device, error) {
	for _, d := range s.devices {
		if d.name == name {
			return d, nil
		}
	}
	return nil, fmt.Errorf("qat: no device %q", name)
}

// BindProcess runs process pid on the core (meter) m: its requests are
// timed by m's clock and its driver-side work is charged to m. Sim-only
// wiring; a process never bound is untimed and charged nothing.
func (s *Service) BindProcess(pid hw.ProcessID, m hw.Meter) { s.proc(pid).meter = m }

// SetCompletionMode sets how process pid learns of completions,
// overriding its devices' default.
func (s *Service) SetCompletionMode(pid hw.ProcessID, mode CompletionMode) error {
	if err := mode.Validate(); err != nil {
		return fmt.Errorf("qat: process %d: %w", pid, err)
	}
	s.proc(pid).mode = mode
	return nil
}

// proc returns the record of pid, making it on first sight (and again
// after an exit, for a pid that is reused).
func (s *Service) proc(pid hw.ProcessID) *process {
	p := s.procs[pid]
	if p == nil {
		p = &process{pid: pid, bufs: map[uintptr]*pinned{}, pages: map[int][]*usdmPage{}}
		p.stats.PID = int(pid)
		s.procs[pid] = p
	}
	if p.exited {
		p.exited = false
		p.stats.Exited = false
	}
	return p
}

// timed reports whether p's requests run on a clock.
func (s *Service) timed(p *process) bool { return (p != nil && p.meter != nil) || s.clock != nil }

// now is p's current time.
func (s *Service) now(p *process) time.Duration {
	if p != nil && p.meter != nil {
		return p.meter.Now()
	}
	if s.clock != nil {
		return s.clock()
	}
	return 0
}

// charge charges p's core, if it has one.
func (s *Service) charge(p *process, op hw.CostOp, n int64) {
	if p != nil && p.meter != nil && n > 0 {
		p.meter.Charge(op, n)
	}
}

// modeOf is p's completion mode on d.
func (s *Service) modeOf(p *process, d *Device) CompletionMode {
	if p != nil && p.mode != "" {
		return p.mode
	}
	return d.mode
}

// Attach implements hw.CompressService: the lowest free instance of the
// first device on node that has one (then of any device), or an error
// wrapping hw.ErrNoInstance (every instance held) or hw.ErrDeviceDown
// (every candidate device resetting or failed). It costs the attach
// syscalls of the device's driver: open, ioctl and mmap of the rings.
func (s *Service) Attach(pid hw.ProcessID, node int) (hw.CompressInstance, error) {
	p := s.proc(pid)
	if len(s.devices) == 0 {
		s.counters.AttachFailures.NoDevice++
		return nil, fmt.Errorf("qat: attach process %d: no QAT device on this host: %w", pid, hw.ErrNoInstance)
	}
	order := make([]*Device, 0, len(s.devices))
	for _, d := range s.devices {
		if node < 0 || d.node == node {
			order = append(order, d)
		}
	}
	for _, d := range s.devices {
		if node >= 0 && d.node != node {
			order = append(order, d)
		}
	}
	now, timed := s.now(p), s.timed(p)
	var downs, fulls []string
	for _, d := range order {
		if down, why := d.down(now, timed); down {
			downs = append(downs, fmt.Sprintf("%s %s", d.name, why))
			continue
		}
		held := d.heldByFault()
		free := 0
		var first *queuePair
		for _, q := range d.qps {
			if q.owner == nil {
				free++
				if first == nil {
					first = q
				}
			}
		}
		if free-held <= 0 {
			fulls = append(fulls, fmt.Sprintf("%s: all %d instances held (%d by processes, %d by an injected fault)",
				d.name, len(d.qps), len(d.qps)-free, min(held, free)))
			d.counters.AttachFailures++
			continue
		}
		inst := &Instance{dev: d, qp: first, pid: pid}
		first.owner, first.inst = p, inst
		first.stats.Attaches++
		p.insts = append(p.insts, inst)
		p.stats.Attaches++
		d.counters.Attaches++
		s.counters.Attaches++
		s.syscalls(p, d, sysOpen, d.pattern.AttachOpen)
		s.syscalls(p, d, sysIoctl, d.pattern.AttachIoctl)
		s.syscalls(p, d, sysMmap, d.pattern.AttachMmap)
		return inst, nil
	}
	p.stats.AttachFailures++
	if len(fulls) > 0 {
		s.counters.AttachFailures.NoInstance++
		return nil, fmt.Errorf("qat: attach process %d (node %d): %v: %w", pid, node, fulls, hw.ErrNoInstance)
	}
	s.counters.AttachFailures.DeviceDown++
	return nil, fmt.Errorf("qat: attach process %d (node %d): %v: %w", pid, node, downs, hw.ErrDeviceDown)
}

// Detach implements hw.CompressService. Requests still in the
// instance's rings are dropped and counted.
func (s *Service) Detach(pid hw.ProcessID, ci hw.CompressInstance) error {
	inst, ok := ci.(*Instance)
	if !ok || inst == nil {
		return fmt.Errorf("qat: detach process %d: %T is not a QAT instance", pid, ci)
	}
	p := s.procs[pid]
	if p == nil || inst.qp.inst != inst || inst.qp.owner != p {
		s.counters.BadDetaches++
		return fmt.Errorf("qat: detach process %d: instance %s is not held by it", pid, inst.Name())
	}
	s.release(p, inst)
	for i, x := range p.insts {
		if x == inst {
			p.insts = append(p.insts[:i], p.insts[i+1:]...)
			break
		}
	}
	return nil
}

// release gives an instance back.
func (s *Service) release(p *process, inst *Instance) {
	d, q := inst.dev, inst.qp
	dropped := q.clear()
	d.counters.DroppedOnDetach += uint64(dropped)
	d.counters.InFlight -= uint64(dropped)
	d.counters.Detaches++
	p.stats.Detaches++
	q.owner, q.inst = nil, nil
}

// Exit implements hw.CompressService: the process's instances are given
// back (normal: a worker holds its instance until it exits) and its
// pinned memory is freed and counted as leaked, per process and node.
func (s *Service) Exit(pid hw.ProcessID) {
	p := s.procs[pid]
	if p == nil || p.exited {
		return
	}
	for _, inst := range p.insts {
		s.release(p, inst)
		p.stats.InstancesAtExit++
	}
	p.insts = nil
	handles := make([]uintptr, 0, len(p.bufs))
	for h := range p.bufs {
		handles = append(handles, h)
	}
	sort.Slice(handles, func(i, j int) bool { return handles[i] < handles[j] })
	for _, h := range handles {
		b := p.bufs[h]
		p.stats.Leaked.Buffers++
		p.stats.Leaked.Bytes += uint64(b.size)
		s.counters.Leaked.Buffers++
		s.counters.Leaked.Bytes += uint64(b.size)
		s.pool(b.node).leakedBuffers++
		s.pool(b.node).leakedBytes += uint64(b.size)
		if b.page == nil {
			s.freeLegacy(p, b, false)
		}
		delete(p.bufs, h)
		delete(s.bufs, h)
	}
	nodes := make([]int, 0, len(p.pages))
	for n := range p.pages {
		nodes = append(nodes, n)
	}
	sort.Ints(nodes)
	for _, n := range nodes {
		for _, pg := range p.pages[n] {
			if pg.live > 0 {
				p.stats.Leaked.Pages++
				s.counters.Leaked.Pages++
				s.pool(n).leakedPages++
			}
			s.releasePage(p, pg)
		}
		delete(p.pages, n)
	}
	p.exited = true
	p.stats.Exited = true
	s.counters.Exits++
}

// syscallKind names a syscall the driver makes.
type syscallKind int

const (
	sysOpen syscallKind = iota
	sysIoctl
	sysFutex
	sysMmap
)

// syscalls counts n syscalls of a kind for p (and d, if any) and charges
// them to p's core.
func (s *Service) syscalls(p *process, d *Device, kind syscallKind, n int) {
	if n <= 0 {
		return
	}
	var op hw.CostOp
	var c []*SyscallCounts
	c = append(c, &s.counters.Syscalls)
	if p != nil {
		c = append(c, &p.stats.Syscalls)
	}
	if d != nil {
		c = append(c, &d.counters.Syscalls)
	}
	for _, sc := range c {
		switch kind {
		case sysOpen:
			sc.Open += uint64(n)
		case sysIoctl:
			sc.Ioctl += uint64(n)
		case sysFutex:
			sc.Futex += uint64(n)
		case sysMmap:
			sc.Mmap += uint64(n)
		}
	}
	switch kind {
	case sysOpen:
		op = hw.CostSyscallOpen
	case sysIoctl:
		op = hw.CostSyscallIoctl
	case sysFutex:
		op = hw.CostSyscallFutex
	case sysMmap:
		op = hw.CostSyscallMmap
	}
	s.charge(p, op, int64(n))
}

// deviceFor picks the device whose driver serves p's memory on node: the
// device of p's first instance on that node, else the first device on
// the node, else p's first instance's device, else the first device.
func (s *Service) deviceFor(p *process, node int) *Device {
	for _, inst := range p.insts {
		if inst.dev.node == node {
			return inst.dev
		}
	}
	for _, d := range s.devices {
		if d.node == node {
			return d
		}
	}
	if len(p.insts) > 0 {
		return p.insts[0].dev
	}
	if len(s.devices) > 0 {
		return s.devices[0]
	}
	return nil
}

// errNoDevice is returned for memory on a host without devices.
var errNoDevice = errors.New("no QAT device on this host")
