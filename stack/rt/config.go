package rt

import (
	"fmt"
	"time"
)

// Config configures the real-time driver.
type Config struct {
	// Lcores is the number of stack lcores, each with one queue pair of
	// the port (default 1).
	Lcores int `yaml:"lcores"`
	// RxRing and TxRing are the descriptor ring sizes per queue (default
	// 1024 each).
	RxRing int `yaml:"rx_ring"`
	TxRing int `yaml:"tx_ring"`
	// Spin is how long an idle lcore keeps polling before it parks
	// (default 50µs). Zero parks at once when idle is not wanted: use
	// NoSpin. A spinning lcore yields the CPU to other goroutines
	// between polls (runtime.Gosched), so that application goroutines
	// sharing its P are not held up by the spin.
	Spin time.Duration `yaml:"spin"`
	// NoSpin parks an idle lcore at once.
	NoSpin bool `yaml:"no_spin"`
	// MaxPark bounds one park (default 100 ms), for devices that cannot
	// wake a parked lcore when frames arrive.
	MaxPark time.Duration `yaml:"max_park"`
	// Busy never parks: the lcore polls at 100% of its CPU, as a DPDK
	// application does.
	Busy bool `yaml:"busy"`
	// NoLockOSThread leaves lcore goroutines unpinned from OS threads
	// (for tests on machines with few CPUs).
	NoLockOSThread bool `yaml:"no_lock_os_thread"`
	// Seed seeds the instances' TCP secrets (ISNs, cookies); zero draws
	// no special value, it is a seed like any other.
	Seed uint64 `yaml:"seed"`
	// ThreadHook, when set, runs on each lcore's OS thread before its
	// poll loop starts, and the function it returns runs on the same
	// thread after the loop ends. A hardware backend uses it to register
	// the thread with its runtime (DPDK's rte_thread_register, so that
	// mempool caches per lcore are used). An error stops that lcore and
	// is returned by Start. It forces the goroutine onto its OS thread
	// whatever NoLockOSThread says.
	ThreadHook func(lcore int) (done func(), err error) `yaml:"-"`
}

// Defaults.
const (
	DefaultRing    = 1024
	DefaultSpin    = 50 * time.Microsecond
	DefaultMaxPark = 100 * time.Millisecond
	// MaxLcores bounds Lcores.
	MaxLcores = 64
)

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.Lcores == 0 {
		c.Lcores = 1
	}
	if c.RxRing == 0 {
		c.RxRing = DefaultRing
	}
	if c.TxRing == 0 {
		c.TxRing = DefaultRing
	}
	if c.Spin == 0 && !c.NoSpin {
		c.Spin = DefaultSpin
	}
	if c.NoSpin {
		c.Spin = 0
	}
	if c.MaxPark == 0 {
		c.MaxPark = DefaultMaxPark
	}
	return c
}

// Validate names the first bad key.
func (c Config) Validate() error {
	if c.Lcores < 0 || c.Lcores > MaxLcores {
		return fmt.Errorf("lcores: %d is outside 1..%d", c.Lcores, MaxLcores)
	}
	for _, r := range []struct {
		key string
		v   int
	}{{"rx_ring", c.RxRing}, {"tx_ring", c.TxRing}} {
		if r.v != 0 && (r.v < 32 || r.v > 1<<16 || r.v&(r.v-1) != 0) {
			return fmt.Errorf("%s: %d is not a power of two in 32..65536", r.key, r.v)
		}
	}
	if c.Spin < 0 {
		return fmt.Errorf("spin: %v is negative", c.Spin)
	}
	if c.MaxPark < 0 {
		return fmt.Errorf("max_park: %v is negative", c.MaxPark)
	}
	return nil
}
