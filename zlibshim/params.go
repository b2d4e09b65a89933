package zlibshim

import (
	"fmt"
	"time"
)

// Flush is zlib's flush argument to Deflate and Inflate.
type Flush int

// Flush modes (zlib.h). Z_PARTIAL_FLUSH, Z_BLOCK and Z_TREES are not
// offered: no user of the shim needs them.
const (
	NoFlush   Flush = iota // Z_NO_FLUSH: buffer as it likes
	SyncFlush              // Z_SYNC_FLUSH: all output so far, byte aligned
	FullFlush              // Z_FULL_FLUSH: a sync flush that also resets history
	Finish                 // Z_FINISH: end the stream
)

func (f Flush) String() string {
	switch f {
	case NoFlush:
		return "no-flush"
	case SyncFlush:
		return "sync-flush"
	case FullFlush:
		return "full-flush"
	case Finish:
		return "finish"
	}
	return fmt.Sprintf("flush(%d)", int(f))
}

// Compression levels (zlib.h).
const (
	NoCompression      = 0
	BestSpeed          = 1
	BestCompression    = 9
	DefaultCompression = -1
)

// Deflated is zlib's only method, Z_DEFLATED.
const Deflated = 8

// MaxWBits is the largest window, 32 KiB (MAX_WBITS).
const MaxWBits = 15

// Strategy is zlib's strategy argument to DeflateInit2.
type Strategy int

// Strategies (zlib.h).
const (
	DefaultStrategy Strategy = iota // Z_DEFAULT_STRATEGY
	Filtered                        // Z_FILTERED
	HuffmanOnly                     // Z_HUFFMAN_ONLY
	RLE                             // Z_RLE
	Fixed                           // Z_FIXED
)

// Format is the wrapper around the deflate data.
type Format int

// Formats. Raw, Zlib and Gzip are what zlib's windowBits select (-8..-15,
// 8..15, 24..31); GzipExt is QATzip's: one gzip member per request, each
// with an extra field "QZ" holding the member's input and deflate sizes
// (QATzip's qatzip_internal.h, QzExtraHeader_T), so any gunzip reads it.
const (
	FormatRaw Format = iota
	FormatZlib
	FormatGzip
	FormatGzipExt
	// FormatAuto is for inflate only: zlib or gzip by the first bytes
	// (windowBits + 32).
	FormatAuto
)

func (f Format) String() string {
	switch f {
	case FormatRaw:
		return "deflate"
	case FormatZlib:
		return "zlib"
	case FormatGzip:
		return "gzip"
	case FormatGzipExt:
		return "gzipext"
	case FormatAuto:
		return "auto"
	}
	return fmt.Sprintf("format(%d)", int(f))
}

// ParseFormat reads a format name as qzip's -O takes it.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "deflate", "raw":
		return FormatRaw, nil
	case "zlib":
		return FormatZlib, nil
	case "gzip":
		return FormatGzip, nil
	case "gzipext":
		return FormatGzipExt, nil
	case "auto":
		return FormatAuto, nil
	}
	return 0, fmt.Errorf("format %q: want deflate, zlib, gzip or gzipext: %w", s, ErrStream)
}

// formatFromWindowBits decodes zlib's windowBits convention.
func formatFromWindowBits(wb int, inflate bool) (Format, int, error) {
	switch {
	case wb >= -15 && wb <= -8:
		return FormatRaw, -wb, nil
	case wb >= 8 && wb <= 15:
		return FormatZlib, wb, nil
	case wb >= 24 && wb <= 31:
		return FormatGzip, wb - 16, nil
	case inflate && wb >= 40 && wb <= 47:
		return FormatAuto, wb - 32, nil
	case inflate && wb == 0:
		// zlib 1.2.3.5+: use the window size in the zlib header.
		return FormatZlib, 15, nil
	}
	return 0, 0, fmt.Errorf("window bits %d out of range: %w", wb, ErrStream)
}

// Policy says when the shim may use hardware, as nginx's QATzip module's
// qatzip_sw directive does (no, failover, only).
type Policy int

// Policies. The zero value is the default, failover.
const (
	// PolicyFailover uses hardware and falls back to software when the
	// hardware cannot serve a request.
	PolicyFailover Policy = iota
	// PolicySoftwareOnly never touches hardware.
	PolicySoftwareOnly
	// PolicyHardwareOnly uses hardware for every request, small ones too,
	// and fails a request the hardware cannot serve with ErrHardware.
	PolicyHardwareOnly
)

func (p Policy) String() string {
	switch p {
	case PolicyFailover:
		return "failover"
	case PolicySoftwareOnly:
		return "software-only"
	case PolicyHardwareOnly:
		return "hardware-only"
	}
	return fmt.Sprintf("policy(%d)", int(p))
}

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "failover", "":
		return PolicyFailover, nil
	case "software-only":
		return PolicySoftwareOnly, nil
	case "hardware-only":
		return PolicyHardwareOnly, nil
	}
	return 0, fmt.Errorf("policy %q: want software-only, failover or hardware-only", s)
}

// MarshalText implements encoding.TextMarshaler (YAML and JSON).
func (p Policy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Policy) UnmarshalText(b []byte) error {
	v, err := ParsePolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// CompletionMode says how the shim learns that a request completed.
type CompletionMode int

// Completion modes. Polling is the default: Tengine's workers are
// single-threaded and epoll-driven, and the seed's thread mode cost a
// futex storm.
const (
	// CompletionPolling polls the response ring in the caller's thread.
	CompletionPolling CompletionMode = iota
	// CompletionThread sleeps until the driver signals a completion
	// (hw.CompletionWaiter), paying futex and context switches; devices
	// without a waiter are polled.
	CompletionThread
)

func (m CompletionMode) String() string {
	if m == CompletionThread {
		return "thread"
	}
	return "polling"
}

// MarshalText implements encoding.TextMarshaler.
func (m CompletionMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *CompletionMode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "polling", "":
		*m = CompletionPolling
	case "thread":
		*m = CompletionThread
	default:
		return fmt.Errorf("completion %q: want polling or thread", string(b))
	}
	return nil
}

// Config is a Process's configuration. Zero fields take the defaults
// below (QATzip's where QATzip has one).
type Config struct {
	// Policy: failover (default), software-only or hardware-only.
	Policy Policy `yaml:"policy" json:"policy"`
	// Completion: polling (default) or thread.
	Completion CompletionMode `yaml:"completion" json:"completion"`
	// RequestSize is the input size of one hardware request, the size of
	// the pinned staging buffer (QATzip's hw_buff_sz: 64 KiB).
	RequestSize int `yaml:"request_size" json:"request_size"`
	// SoftwareThreshold: requests with less input go to software (QATzip's
	// input_sz_thrshold: 1 KiB). Ignored under hardware-only.
	SoftwareThreshold int `yaml:"software_threshold" json:"software_threshold"`
	// RetryAfter is how many requests are served in software after a
	// hardware failure before hardware is tried again (QATzip: 8).
	// Negative means retry at once.
	RetryAfter int `yaml:"retry_after" json:"retry_after"`
	// Timeout is how long a request may stay on the device before it is
	// declared hung and redone in software (default 100 ms).
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// MaxPolls caps the polls of one request, a safety net beside Timeout
	// for meters whose clock does not move (default 1,000,000).
	MaxPolls int `yaml:"max_polls" json:"max_polls"`
	// PollInterval, when positive, is idled between empty polls (QATzip's
	// polling interval); zero spins, and the device charges each poll.
	PollInterval time.Duration `yaml:"poll_interval" json:"poll_interval"`
	// InstancePerStream gives each stream its own instance, returned by
	// its End, instead of one instance per process (Tengine's shape).
	InstancePerStream bool `yaml:"instance_per_stream" json:"instance_per_stream"`
	// NUMANode is the node whose instances and memory are preferred; -1
	// means any. The zero value means node 0.
	NUMANode int `yaml:"numa_node" json:"numa_node"`
	// LeakAge: an open stream without a call for this long is reported as
	// leaked (default 1 s).
	LeakAge time.Duration `yaml:"leak_age" json:"leak_age"`
}

// Defaults (QATzip 1.x: QZ_HW_BUFF_SZ, QZ_COMP_THRESHOLD_DEFAULT,
// the sw-backup retry count).
const (
	DefaultRequestSize       = 64 << 10
	DefaultSoftwareThreshold = 1 << 10
	DefaultRetryAfter        = 8
	DefaultTimeout           = 100 * time.Millisecond
	DefaultMaxPolls          = 1_000_000
	DefaultLeakAge           = time.Second
	maxRequestSize           = 16 << 20
)

// Validate checks the configuration; errors name the key.
func (c Config) Validate() error {
	switch {
	case c.Policy < PolicyFailover || c.Policy > PolicyHardwareOnly:
		return fmt.Errorf("policy: %d is not a policy", int(c.Policy))
	case c.Completion < CompletionPolling || c.Completion > CompletionThread:
		return fmt.Errorf("completion: %d is not a completion mode", int(c.Completion))
	case c.RequestSize < 0 || c.RequestSize > maxRequestSize:
		return fmt.Errorf("request_size: %d is outside 0..%d", c.RequestSize, maxRequestSize)
	case c.RequestSize > 0 && c.RequestSize < 4096:
		return fmt.Errorf("request_size: %d is below 4096", c.RequestSize)
	case c.SoftwareThreshold < 0:
		return fmt.Errorf("software_threshold: %d is negative", c.SoftwareThreshold)
	case c.Timeout < 0:
		return fmt.Errorf("timeout: %v is negative", c.Timeout)
	case c.MaxPolls < 0:
		return fmt.Errorf("max_polls: %d is negative", c.MaxPolls)
	case c.PollInterval < 0:
		return fmt.Errorf("poll_interval: %v is negative", c.PollInterval)
	case c.NUMANode < -1:
		return fmt.Errorf("numa_node: %d is below -1", c.NUMANode)
	case c.LeakAge < 0:
		return fmt.Errorf("leak_age: %v is negative", c.LeakAge)
	}
	return nil
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.RequestSize == 0 {
		c.RequestSize = DefaultRequestSize
	}
	if c.SoftwareThreshold == 0 {
		c.SoftwareThreshold = DefaultSoftwareThreshold
	}
	switch {
	case c.RetryAfter == 0:
		c.RetryAfter = DefaultRetryAfter
	case c.RetryAfter < 0:
		c.RetryAfter = 0
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxPolls == 0 {
		c.MaxPolls = DefaultMaxPolls
	}
	if c.LeakAge == 0 {
		c.LeakAge = DefaultLeakAge
	}
	return c
}
