package qat

import (
	"errors"
	"fmt"
	"time"
)

// Config is the QAT part of one host: its devices (the scenario key
// `qat:` of a host is the Devices list) and the host-wide models.
type Config struct {
	Devices []DeviceConfig `yaml:"devices"`
	// Legacy tunes the kernel's contiguous-memory model used by the
	// qat1.6-legacy driver.
	Legacy LegacyConfig `yaml:"legacy"`
}

// DeviceConfig is one QAT device on a host.
type DeviceConfig struct {
	// Name identifies the device in statistics and fault events; default
	// "qat<index>".
	Name string `yaml:"name"`
	// Model is a preset: dh895xcc, c62x or 4xxx.
	Model string `yaml:"model"`
	// NUMANode is the node the device is attached to.
	NUMANode int `yaml:"numa_node"`
	// Instances is the number of compression instances of the device
	// section (NumberDcInstances x NumProcesses in the driver's config);
	// 0 means the driver's default (64, or 256 for oot40052).
	Instances int `yaml:"instances"`
	// VFs is the number of SR-IOV virtual functions enabled (0: the PFs
	// are used directly); instances are spread across them.
	VFs int `yaml:"vfs"`
	// Driver is the driver generation; default oot40052.
	Driver Driver `yaml:"driver"`
	// Completion is the default completion mode of the device's
	// processes; default polling.
	Completion CompletionMode `yaml:"completion"`
	// RingDepth is the number of requests a queue pair holds in flight
	// (enqueued and not yet dequeued); default 512, the driver's
	// DcNumConcurrentRequests default.
	RingDepth int `yaml:"ring_depth"`
	// Engines, CompressGbps, DecompressGbps and Latency override the
	// model's service-time defaults when non-zero.
	Engines        int           `yaml:"engines"`
	CompressGbps   float64       `yaml:"compress_gbps"`
	DecompressGbps float64       `yaml:"decompress_gbps"`
	Latency        time.Duration `yaml:"latency"`
	// USDM sets the limits of the USDM hugepage pool of the device's
	// node.
	USDM USDMConfig `yaml:"usdm"`
	// Faults are active from the start of the run.
	Faults []FaultConfig `yaml:"faults"`
}

// USDMConfig mirrors the usdm_drv module parameters.
type USDMConfig struct {
	// MaxHugePages is the number of 2 MiB hugepages USDM may take on the
	// node (usdm_drv max_huge_pages); default 1024.
	MaxHugePages int `yaml:"max_huge_pages"`
	// MaxHugePagesPerProcess limits one process
	// (max_huge_pages_per_process); default 48.
	MaxHugePagesPerProcess int `yaml:"max_huge_pages_per_process"`
}

// LegacyConfig is the fragmentation model of the kernel's contiguous
// allocations (see legacy.go for the formula). Zero fields take the
// defaults of DefaultLegacyConfig.
type LegacyConfig struct {
	// InitialFragmentation is the fragmentation of a node's free memory
	// at the start, in [0, MaxFragmentation].
	InitialFragmentation float64 `yaml:"initial_fragmentation"`
	// MaxFragmentation is the bound fragmentation approaches, below 1.
	MaxFragmentation float64 `yaml:"max_fragmentation"`
	// Growth is the share of the distance to MaxFragmentation that one
	// free of a contiguous allocation adds.
	Growth float64 `yaml:"growth"`
	// Recovery is the share of the fragmentation one compaction run
	// removes.
	Recovery float64 `yaml:"recovery"`
}

// DefaultLegacyConfig returns the defaults of the fragmentation model.
// They are assumptions, chosen so that the equilibrium fragmentation
// (Growth*Max/(Growth+Recovery), about 0.99) makes a 96-page (384 KiB: a
// zlib deflate state plus two 64 KiB buffers) contiguous allocation migrate
// about 9,500 pages, ~24 ms of kernel time at 2.5 us a page: the order of
// magnitude at which the seed's 32-thread machine saturated at ~1k QPS
// with >90% of its time in the kernel.
func DefaultLegacyConfig() LegacyConfig {
	return LegacyConfig{InitialFragmentation: 0.3, MaxFragmentation: 0.995, Growth: 0.01, Recovery: 0.00005}
}

// FaultConfig is a fault active from the start (or, in an event, from
// the event's time).
type FaultConfig struct {
	// Kind is one of instance_exhaustion, usdm_exhaustion, engine_error,
	// hang, reset, heartbeat.
	Kind FaultKind `yaml:"kind"`
	// Rate is the share of requests that fail (engine_error).
	Rate float64 `yaml:"rate"`
	// Instances is how many instances are held (instance_exhaustion);
	// 0 holds them all.
	Instances int `yaml:"instances"`
	// Delay is how long the device stays unavailable (reset).
	Delay time.Duration `yaml:"delay"`
}

// Validate checks a host's QAT configuration; errors name the key.
func (c Config) Validate() error {
	var errs []error
	names := map[string]bool{}
	usdm := map[int]USDMConfig{}
	for i, d := range c.Devices {
		if err := d.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("devices[%d].%w", i, err))
			continue
		}
		name := d.name(i)
		if names[name] {
			errs = append(errs, fmt.Errorf("devices[%d].name: %q is used twice", i, name))
		}
		names[name] = true
		if prev, ok := usdm[d.NUMANode]; ok && d.USDM != (USDMConfig{}) && prev != (USDMConfig{}) && prev != d.USDM {
			errs = append(errs, fmt.Errorf("devices[%d].usdm: differs from another device's on numa_node %d (USDM limits are per node)", i, d.NUMANode))
		}
		if d.USDM != (USDMConfig{}) {
			usdm[d.NUMANode] = d.USDM
		}
	}
	if err := c.Legacy.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("legacy.%w", err))
	}
	return errors.Join(errs...)
}

// name returns the device's name or its default.
func (d DeviceConfig) name(i int) string {
	if d.Name != "" {
		return d.Name
	}
	return fmt.Sprintf("qat%d", i)
}

// Validate checks one device; errors name the key.
func (d DeviceConfig) Validate() error {
	m, err := ModelByName(d.Model)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	switch {
	case d.NUMANode < 0:
		return fmt.Errorf("numa_node: %d is negative", d.NUMANode)
	case d.Instances < 0 || d.Instances > 4096:
		return fmt.Errorf("instances: %d is not in 0..4096", d.Instances)
	case d.VFs < 0 || d.VFs > m.MaxVFs():
		return fmt.Errorf("vfs: %d is not in 0..%d (%s: %d PF x %d VFs)", d.VFs, m.MaxVFs(), m.Name, int(m.PFs.Value), int(m.MaxVFsPerPF.Value))
	case d.RingDepth < 0 || d.RingDepth > 1<<16:
		return fmt.Errorf("ring_depth: %d is not in 0..65536", d.RingDepth)
	case d.Engines < 0 || d.Engines > 256:
		return fmt.Errorf("engines: %d is not in 0..256", d.Engines)
	case d.CompressGbps < 0 || d.CompressGbps > 10000:
		return fmt.Errorf("compress_gbps: %v is not in 0..10000", d.CompressGbps)
	case d.DecompressGbps < 0 || d.DecompressGbps > 10000:
		return fmt.Errorf("decompress_gbps: %v is not in 0..10000", d.DecompressGbps)
	case d.Latency < 0:
		return fmt.Errorf("latency: %v is negative", d.Latency)
	case d.USDM.MaxHugePages < 0:
		return fmt.Errorf("usdm.max_huge_pages: %d is negative", d.USDM.MaxHugePages)
	case d.USDM.MaxHugePagesPerProcess < 0:
		return fmt.Errorf("usdm.max_huge_pages_per_process: %d is negative", d.USDM.MaxHugePagesPerProcess)
	}
	if d.Driver != "" {
		if err := d.Driver.Validate(); err != nil {
			return err
		}
	}
	if d.Completion != "" {
		if err := d.Completion.Validate(); err != nil {
			return err
		}
	}
	for i, f := range d.Faults {
		if err := f.Validate(); err != nil {
			return fmt.Errorf("faults[%d].%w", i, err)
		}
	}
	return nil
}

// Validate checks a fault; errors name the key.
func (f FaultConfig) Validate() error {
	if err := f.Kind.Validate(); err != nil {
		return err
	}
	switch {
	case f.Rate < 0 || f.Rate > 1:
		return fmt.Errorf("rate: %v is not in 0..1", f.Rate)
	case f.Instances < 0:
		return fmt.Errorf("instances: %d is negative", f.Instances)
	case f.Delay < 0:
		return fmt.Errorf("delay: %v is negative", f.Delay)
	case f.Kind == FaultEngineError && f.Rate == 0:
		return fmt.Errorf("rate: engine_error needs a rate above 0")
	}
	return nil
}

// Validate checks the fragmentation model.
func (l LegacyConfig) Validate() error {
	switch {
	case l.MaxFragmentation < 0 || l.MaxFragmentation >= 1:
		return fmt.Errorf("max_fragmentation: %v is not in [0, 1)", l.MaxFragmentation)
	case l.InitialFragmentation < 0 || l.InitialFragmentation >= 1:
		return fmt.Errorf("initial_fragmentation: %v is not in [0, 1)", l.InitialFragmentation)
	case l.Growth < 0 || l.Growth > 1:
		return fmt.Errorf("growth: %v is not in [0, 1]", l.Growth)
	case l.Recovery < 0 || l.Recovery > 1:
		return fmt.Errorf("recovery: %v is not in [0, 1]", l.Recovery)
	}
	return nil
}

// withDefaults fills zero fields.
func (l LegacyConfig) withDefaults() LegacyConfig {
	d := DefaultLegacyConfig()
	if l.InitialFragmentation == 0 {
		l.InitialFragmentation = d.InitialFragmentation
	}
	if l.MaxFragmentation == 0 {
		l.MaxFragmentation = d.MaxFragmentation
	}
	if l.Growth == 0 {
		l.Growth = d.Growth
	}
	if l.Recovery == 0 {
		l.Recovery = d.Recovery
	}
	l.InitialFragmentation = min(l.InitialFragmentation, l.MaxFragmentation)
	return l
}

// withDefaults fills zero fields.
func (u USDMConfig) withDefaults() USDMConfig {
	if u.MaxHugePages == 0 {
		u.MaxHugePages = 1024
	}
	if u.MaxHugePagesPerProcess == 0 {
		u.MaxHugePagesPerProcess = 48
	}
	return u
}
