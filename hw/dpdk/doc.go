// Package dpdk implements Savanna's hardware contracts (package hw) with
// cgo over real DPDK 22.11, Debian's libdpdk-dev: hw.EthDev over
// rte_ethdev, hw.Mempool over rte_pktmbuf_pool_create and hw.CompressDev
// over rte_compressdev. It is built only with -tags dpdk; without the tag
// the package has no cgo and no DPDK dependency, Available reports false
// and Init returns an error naming the tag, so the wiring (rig/, cmd/)
// compiles the same in both builds and nothing above hw/ changes
// (architecture invariants 1 and 5).
//
// The shape of the backend (docs/real-hardware.md has the long form):
//
//   - Init runs rte_eal_init once per process on a goroutine locked to its
//     OS thread, which becomes the EAL's main lcore; the EAL arguments and
//     vdevs come from Config unchanged.
//   - Every rte_mbuf of a pool made here has a twin hw.Mbuf, made once
//     when the pool is created. The rte_mbuf's private area holds the
//     twin's index, so a burst converts between the two with no
//     allocation and no copy of packet bytes: hw.Mbuf.Buf is a view of
//     the rte_mbuf's buffer, Handle its address.
//   - Reference counts live on the Go side (hw.Mbuf.RefCnt, as hw.Mbuf.Free
//     expects); DPDK's refcnt holds one reference for all of them plus one
//     per device that holds the segment. TxBurst hands one Go reference to
//     the device, so the device's rte_pktmbuf_free and the caller's later
//     Free both hold (burst.go has the rule).
//   - The C side is a header of static inline wrappers (sv_dpdk.h),
//     crossed once per burst, never per packet.
//
// The configuration types live in this file because both builds carry
// them.
package dpdk

import (
	"fmt"
	"strings"
)

// Config is the EAL configuration (rte_eal_init's argv). Arguments pass
// through unchanged; see docs/real-hardware.md for the ones that matter.
type Config struct {
	// Args are EAL arguments, e.g. ["-l", "0-3", "-a", "0000:3b:00.0"]
	// on a real machine, or ["--no-huge", "-m", "256", "--no-pci",
	// "--no-shconf", "-l", "0"] without hugepages or PCI devices.
	Args []string `yaml:"eal_args"`
	// VDevs are virtual devices, each passed as --vdev=<value>, e.g.
	// "net_ring0" or "compress_zlib".
	VDevs []string `yaml:"vdevs"`
	// ProgramName is argv[0] (the EAL uses it for the default file
	// prefix and in logs); empty means "savanna".
	ProgramName string `yaml:"program_name"`
}

// Validate names the first bad key.
func (c Config) Validate() error {
	noHuge, inMem := false, false
	for i, a := range c.Args {
		if a == "" {
			return fmt.Errorf("eal_args[%d]: empty argument", i)
		}
		noHuge = noHuge || a == "--no-huge"
		inMem = inMem || a == "--in-memory"
	}
	if noHuge && inMem {
		// The EAL refuses the pair (eal_common_options.c); say so early.
		return fmt.Errorf("eal_args: --in-memory cannot be combined with --no-huge; use --no-shconf instead")
	}
	for i, v := range c.VDevs {
		if v == "" || strings.HasPrefix(v, "-") {
			return fmt.Errorf("vdevs[%d]: %q is not a device name such as net_ring0 or compress_zlib", i, v)
		}
	}
	return nil
}

// Argv returns rte_eal_init's argument vector: program name, Args, then
// one --vdev per VDevs entry.
func (c Config) Argv() []string {
	prog := c.ProgramName
	if prog == "" {
		prog = "savanna"
	}
	argv := append([]string{prog}, c.Args...)
	for _, v := range c.VDevs {
		argv = append(argv, "--vdev="+v)
	}
	return argv
}

// AnySocket asks for memory on the calling thread's NUMA socket
// (rte_socket_id), or on the device's socket where a device is involved.
const AnySocket = -1

// MempoolConfig describes a packet mbuf pool (rte_pktmbuf_pool_create).
type MempoolConfig struct {
	// Name is the pool's name, unique in the process.
	Name string `yaml:"name"`
	// Size is the number of mbufs.
	Size int `yaml:"size"`
	// Cache is the per-lcore cache size (0 for none; at most 512 and at
	// most Size/1.5, RTE_MEMPOOL_CACHE_MAX_SIZE).
	Cache int `yaml:"cache"`
	// DataRoom is each mbuf's buffer, headroom included (at most 65535,
	// since buf_len is 16 bits).
	DataRoom int `yaml:"data_room"`
	// Socket is the NUMA socket to allocate on, or AnySocket.
	Socket int `yaml:"socket"`
}

// Validate names the first bad key.
func (c MempoolConfig) Validate() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("name: empty")
	case c.Size <= 0 || c.Size > 1<<24:
		return fmt.Errorf("size: %d is outside 1..%d", c.Size, 1<<24)
	case c.Cache < 0 || c.Cache > 512 || float64(c.Cache)*1.5 > float64(c.Size):
		return fmt.Errorf("cache: %d is outside 0..min(512, size/1.5)", c.Cache)
	case c.DataRoom <= 128 || c.DataRoom > 1<<16-1:
		return fmt.Errorf("data_room: %d is outside 129..65535", c.DataRoom)
	case c.Socket < AnySocket:
		return fmt.Errorf("socket: %d is not a socket (or -1 for any)", c.Socket)
	}
	return nil
}

// CompressConfig configures a compressdev (rte_compressdev_configure and
// queue pair setup) and the mbufs its operations are staged in.
type CompressConfig struct {
	// QueuePairs is the number of queue pairs (default 1).
	QueuePairs int `yaml:"queue_pairs"`
	// Depth is the number of operations in flight per queue pair
	// (default 64).
	Depth int `yaml:"depth"`
	// Mbufs is the number of 64 KiB staging mbufs for sources and
	// destinations (default 512; a 1 MiB operation takes about 34).
	Mbufs int `yaml:"mbufs"`
	// Socket is the NUMA socket for the device's memory, or AnySocket for
	// the device's own socket.
	Socket int `yaml:"socket"`
}

// WithDefaults fills zero fields.
func (c CompressConfig) WithDefaults() CompressConfig {
	if c.QueuePairs == 0 {
		c.QueuePairs = 1
	}
	if c.Depth == 0 {
		c.Depth = 64
	}
	if c.Mbufs == 0 {
		c.Mbufs = 512
	}
	return c
}

// Validate names the first bad key.
func (c CompressConfig) Validate() error {
	switch {
	case c.QueuePairs < 0 || c.QueuePairs > 256:
		return fmt.Errorf("queue_pairs: %d is outside 1..256", c.QueuePairs)
	case c.Depth < 0 || c.Depth > 4096:
		return fmt.Errorf("depth: %d is outside 1..4096", c.Depth)
	case c.Mbufs < 0 || c.Mbufs > 1<<20:
		return fmt.Errorf("mbufs: %d is outside 1..%d", c.Mbufs, 1<<20)
	case c.Socket < AnySocket:
		return fmt.Errorf("socket: %d is not a socket (or -1 for any)", c.Socket)
	}
	return nil
}
