package calibrate

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The per-connection working set of the kernel path (sim/cost.ConnCache)
// is measured by three benchmarks: the price of a miss (a pointer chase),
// the size of the private cache it is a miss of (/sys), and loopback TCP
// round trips spread round-robin over more and more connections, whose
// rise over one connection kernel_conn_bytes is fitted to.

// connScaleBenches are the working set's benchmarks, in order
// (registered in Standard).
func connScaleBenches() []Bench {
	b := []Bench{cacheMissChase(), coreCacheSize()}
	for _, n := range ConnScalePoints() {
		b = append(b, tcpRRConns(n))
	}
	return b
}

// cacheMissChase measures a dependent load that misses the core's private
// cache: a random cyclic permutation of the buffer's cache lines, each
// holding the index of the next, walked so that each load waits for the
// one before (lmbench lat_mem_rd's shape, with a random order that
// defeats the prefetchers). The buffer is mapped with transparent huge
// pages where the kernel allows, so that the figure is the cache's and
// not the TLB's, as for the kernel's own memory (its direct map uses
// huge pages).
func cacheMissChase() Bench {
	return Bench{Name: "cache_miss_chase", Unit: "ns/load",
		What: fmt.Sprintf("dependent loads over a random cyclic permutation of the 64-byte lines of a buffer %d times the private cache's size (%d MiB where /sys lists none; transparent huge pages advised), thread CPU time per load", chaseFactor, chaseBytes>>20),
		Run: func(scale float64) (Sample, error) {
			size := chaseBytes
			if c, err := privateCacheBytes("/sys/devices/system/cpu/cpu0/cache"); err == nil {
				size = int(c) * chaseFactor
			}
			mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
			if err != nil {
				return Sample{}, fmt.Errorf("mmap: %w", err)
			}
			defer unix.Munmap(mem)
			_ = unix.Madvise(mem, unix.MADV_HUGEPAGE) // advice only
			const line = 64
			lines := size / line
			// Sattolo's algorithm: one cycle through every line.
			order := make([]uint32, lines)
			for i := range order {
				order[i] = uint32(i)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for i := lines - 1; i > 0; i-- {
				j := rng.IntN(i)
				order[i], order[j] = order[j], order[i]
			}
			slot := func(i uint32) *uint64 { return (*uint64)(unsafe.Pointer(&mem[int(i)*line])) }
			for i := range order {
				*slot(uint32(i)) = uint64(order[i])
			}
			n := connIters(4_000_000, scale)
			cur := uint32(0)
			for range lines / 8 { // warm the TLB and the shared cache
				cur = uint32(*slot(cur))
			}
			d, err := cpuOnce(func() {
				for range n {
					cur = uint32(*slot(cur))
				}
			})
			sinkU64(uint64(cur))
			return Sample{Value: d / float64(n)}, err
		}}
}

// coreCacheSize reads the size of the private unified cache of the CPU
// the thread runs on (the L2) from /sys/devices/system/cpu/cpuN/cache:
// the highest-level unified cache shared with no other core.
func coreCacheSize() Bench {
	return Bench{Name: "core_cache_size", Unit: "bytes",
		What: "the largest private unified cache of CPU 0 (the L2), /sys/devices/system/cpu/cpu0/cache/index*/{level,type,size,shared_cpu_list}",
		Run: func(float64) (Sample, error) {
			v, err := privateCacheBytes("/sys/devices/system/cpu/cpu0/cache")
			return Sample{Value: float64(v)}, err
		}}
}

// privateCacheBytes returns the size of the largest unified cache under
// dir that no other CPU shares.
func privateCacheBytes(dir string) (int64, error) {
	idx, _ := filepath.Glob(filepath.Join(dir, "index*"))
	var best int64
	for _, d := range idx {
		read := func(f string) string {
			b, _ := os.ReadFile(filepath.Join(d, f))
			return strings.TrimSpace(string(b))
		}
		if read("type") != "Unified" {
			continue
		}
		shared := read("shared_cpu_list")
		if strings.ContainsAny(shared, ",-") {
			continue // shared with another CPU (an L3, or an L2 of a cluster)
		}
		size, err := parseCacheSize(read("size"))
		if err != nil {
			return 0, fmt.Errorf("%s/size: %w", d, err)
		}
		best = max(best, size)
	}
	if best == 0 {
		return 0, errSkip("no private unified cache listed under " + dir)
	}
	return best, nil
}

// parseCacheSize reads sysfs's "2048K" (or "2M", or bytes).
func parseCacheSize(s string) (int64, error) {
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("cache size %q", s)
	}
	return v * mul, nil
}

// tcpRRConns is a 64-byte request and response over loopback TCP, one
// thread, taking the connections of n loopback pairs in turn: each round
// trip is a write on a client socket, the read of it on the server end,
// the reply's write and its read, so that one CPU runs both ends'
// system calls and (loopback) both segments' softirq, touching the state
// of 2n sockets in turn. Against n = 1 the rise is what the sockets'
// state costs once it no longer fits the core's cache.
func tcpRRConns(n int) Bench {
	return Bench{Name: fmt.Sprintf("tcp_rr_conns_%d", n), Unit: "ns/round trip",
		What: fmt.Sprintf("%d-byte request and response over TCP on 127.0.0.1, TCP_NODELAY, one thread taking %d connections in turn (round-robin), thread CPU time per round trip", rrMessage, n),
		Run: func(scale float64) (Sample, error) {
			var lim syscall.Rlimit
			if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < uint64(2*n+64) {
				return Sample{}, errSkip(fmt.Sprintf("RLIMIT_NOFILE %d is below the %d descriptors %d connections need", lim.Cur, 2*n+64, n))
			}
			pairs := make([][2]int, 0, n)
			defer func() {
				for _, p := range pairs {
					unix.Close(p[0])
					unix.Close(p[1])
				}
			}()
			for range n {
				c, s, err := tcpPair()
				if err != nil {
					return Sample{}, err
				}
				pairs = append(pairs, [2]int{c, s})
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			buf := make([]byte, rrMessage)
			trip := func(p [2]int) error {
				if err := writeFull(p[0], buf); err != nil {
					return err
				}
				if err := readFull(p[1], buf); err != nil {
					return err
				}
				if err := writeFull(p[1], buf); err != nil {
					return err
				}
				return readFull(p[0], buf)
			}
			for _, p := range pairs { // every socket's state allocated and touched once
				if err := trip(p); err != nil {
					return Sample{}, err
				}
			}
			total := max(n, connIters(20_000, scale))
			var terr error
			d, err := cpuOnce(func() {
				for i := range total {
					if terr = trip(pairs[i%n]); terr != nil {
						return
					}
				}
			})
			if terr != nil {
				return Sample{}, terr
			}
			return Sample{Value: d / float64(total)}, err
		}}
}

// cpuOnce runs f once on a locked thread and returns its thread CPU
// time in ns.
func cpuOnce(f func()) (float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, err := threadCPU()
	if err != nil {
		return 0, err
	}
	f()
	c1, err := threadCPU()
	if err != nil {
		return 0, err
	}
	return float64(c1 - c0), nil
}
