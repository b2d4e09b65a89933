package cost

import (
	"math"

	"github.com/savanna-sim/savanna/hw"
)

// The cost-file keys of the per-connection working set (KernelPath's
// connection misses): a dependent load that misses the core's private
// cache (time), the bytes of per-connection kernel state one segment's
// processing touches, and the bytes of private cache per core (sizes,
// unit "bytes": never charged as time).
const (
	KeyCacheMiss       = "cache_miss"
	KeyKernelConnBytes = "kernel_conn_bytes"
	KeyCoreCacheBytes  = "core_cache_bytes"
)

// cacheLine is the size of the unit a miss fetches. 64 bytes on every
// x86-64 and on the Kunpeng 920's TaiShan v110 cores (Arm's
// CTR_EL0.DminLine of 16 words; HiSilicon's Kunpeng 920 technical white
// paper).
const cacheLine = 64

// ConnCache is the per-connection working set of the kernel's network
// path on one host: the state a segment's processing touches on its
// socket (struct sock and tcp_sock, the epitem, the socket's skb queue
// heads) is a set of cache lines per connection, and once the
// connections a core serves hold more of it than the core's private
// cache, each segment finds a share of its lines evicted and pays a miss
// for each, served by the shared cache or memory. The zero value models
// nothing (a cost file without the three keys).
type ConnCache struct {
	// Miss is the op a miss is charged as (cache_miss).
	Miss hw.CostOp
	// ConnBytes is kernel_conn_bytes; CacheBytes is core_cache_bytes.
	ConnBytes, CacheBytes float64
}

// ConnCache returns the model's per-connection working set of the kernel
// path: the zero ConnCache when the run's table or the file lacks one of
// its three keys, or when either size is 0 (then nothing is charged).
func (m *Model) ConnCache() ConnCache {
	if m == nil || m.ops == nil {
		return ConnCache{}
	}
	miss, ok1 := m.ops.Lookup(KeyCacheMiss)
	conn, ok2 := m.ops.Lookup(KeyKernelConnBytes)
	cache, ok3 := m.ops.Lookup(KeyCoreCacheBytes)
	if !ok1 || !ok2 || !ok3 {
		return ConnCache{}
	}
	c := ConnCache{Miss: miss, ConnBytes: m.Entries[conn].Value, CacheBytes: m.Entries[cache].Value}
	if !c.Enabled() {
		return ConnCache{}
	}
	return c
}

// Enabled reports whether the working set is modelled.
func (c ConnCache) Enabled() bool { return c.ConnBytes > 0 && c.CacheBytes > 0 }

// Lines is the cache lines of one connection's state a segment touches:
// ceil(ConnBytes / 64).
func (c ConnCache) Lines() float64 { return math.Ceil(c.ConnBytes / cacheLine) }

// MissesPerSegment is what one segment misses when active connections
// share the core's private cache: Lines x max(0, 1 - CacheBytes /
// (active x ConnBytes)). The share evicted is that of a fully associative
// cache under uniform reuse (each connection touched once per round, as
// a closed loop of clients does): the fraction of the connections'
// state that does not fit. Below the cache's size nothing misses.
func (c ConnCache) MissesPerSegment(active int) float64 {
	if !c.Enabled() || active <= 0 {
		return 0
	}
	ws := float64(active) * c.ConnBytes
	if ws <= c.CacheBytes {
		return 0
	}
	return c.Lines() * (1 - c.CacheBytes/ws)
}

// connMisses charges the misses of a run of segments on a meter: the
// expected count, a fraction, is accumulated and whole misses charged as
// it crosses each integer, so that the charge is deterministic and its
// mean exact over many segments.
type connMisses struct {
	c      ConnCache
	active func() int
	// owed is the fraction of a miss accumulated and not yet charged.
	owed float64
}

// charge charges the misses of n segments on m.
func (cm *connMisses) charge(m hw.Meter, n int64) {
	if cm == nil || cm.active == nil || n <= 0 {
		return
	}
	per := cm.c.MissesPerSegment(cm.active())
	if per <= 0 {
		return
	}
	cm.owed += per * float64(n)
	whole := math.Floor(cm.owed)
	if whole >= 1 {
		cm.owed -= whole
		m.Charge(cm.c.Miss, int64(whole))
	}
}
