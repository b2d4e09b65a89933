package scenario

import (
	"time"
)

// Measure is what a Limit bounds of the value at its key.
type Measure int

const (
	// Value bounds an integer, or each integer of a list of them.
	Value Measure = iota
	// Items bounds the number of items of a list or of entries of a
	// mapping.
	Items
	// Sum bounds the sum of a list of integers.
	Sum
	// Span bounds a duration.
	Span
)

// Limit bounds one count or size of a scenario file that sizes an
// allocation or a run. simrun validate checks every limit without
// building anything, so that a file cannot make validation (or a run)
// allocate or last without bound; the error names the key, its value
// and the limit.
type Limit struct {
	// Key is the key path the limit applies to: * stands for a host's
	// name and [] for every item of a list ("hosts.*.apps[].pages").
	Key     string
	Measure Measure
	// Max is the largest value allowed (for Span, in nanoseconds).
	Max int64
	// Why says where the value comes from, for the error and the docs.
	Why string
}

// Limits of a whole file or variant that no single key carries, checked
// from the decoded file (limits_derived.go). yamlstrict.MaxAliasNodes
// bounds the nodes a file reaches through aliases, before anything walks
// it.
const (
	// MaxFileBytes is the largest scenario file read: 1 MiB, two hundred
	// times the largest bundled scenario (5 KB).
	MaxFileBytes = 1 << 20
	// MaxPoolBytes bounds the bytes of every NIC's rx mbuf pools in a
	// variant (rx_queues × mbufs × mbuf_size, defaults applied): the NIC
	// model allocates every mbuf's data room when it builds the variant,
	// in validate too (sim/nic NewMempool). 1 GiB is 1.5 times the
	// largest bundled scenario's (lstack-max-connections: 5 queues of
	// 65,536 mbufs, 680 MiB).
	MaxPoolBytes = 1 << 30
	// MaxMachineCPUs bounds an inline topology's logical CPUs (sockets ×
	// nodes_per_socket × cores_per_node × threads_per_core): 8192, 85
	// times the largest preset's 96.
	MaxMachineCPUs = 8192
	// MaxMachineNodes bounds an inline topology's NUMA nodes (sockets ×
	// nodes_per_socket): 64, 16 times the largest preset's 4; it keeps
	// the distance matrix and the per-node hugepage pools small.
	MaxMachineNodes = 64
	// MaxQATSlots bounds the request slots of every QAT device in a
	// variant (instances × ring_depth, defaults 256 and 512): the model
	// allocates each slot when it builds the device. 2^21 is 4096
	// instances (the model's most) at the default depth.
	MaxQATSlots = 1 << 21
	// MaxStackInstances bounds the stack instances (stack cores) of a
	// variant over all its hosts; each holds its own IP reassembly, ARP
	// and socket tables. 512 is 16 times the largest bundled scenario's.
	MaxStackInstances = 512
)

// Limits returns the limits of keys, in the order the file's sections
// come. docs/scenarios.md ("Limits") lists the same table; a spec checks
// that every bundled scenario keeps within it.
func Limits() []Limit {
	const mib = 1 << 20
	return []Limit{
		{"duration", Span, int64(MaxDuration), "a busy scenario simulates slower than real time; the bundled ones measure at most 1.5 s"},
		{"warmup", Span, int64(MaxWarmup), "as duration"},
		{"hosts", Items, 16, "eight times the bundled scenarios' two"},
		{"links", Items, 64, "four links per host"},
		{"events", Items, 10000, "each is scheduled in the engine when the variant is built"},
		{"capture", Items, 64, "each is an open pcapng file"},
		{"variants", Items, 32, "validate builds every variant"},
		{"expect", Items, 1000, "each is compiled and checked against every variant's figures"},
		{"reproduction", Items, 1000, "as expect"},
		{"links[].flaps", Items, 1000, "each flap is an engine event"},
		{"hosts.*.machine.sockets", Value, MaxMachineCPUs, "see MaxMachineCPUs"},
		{"hosts.*.machine.nodes_per_socket", Value, MaxMachineNodes, "see MaxMachineNodes"},
		{"hosts.*.machine.cores_per_node", Value, MaxMachineCPUs, "see MaxMachineCPUs"},
		{"hosts.*.machine.threads_per_core", Value, 8, "SMT-8 (POWER8) is the most any CPU has"},
		{"hosts.*.machine.distances", Items, MaxMachineNodes, "a row per node"},
		{"hosts.*.machine.hugepages.2MiB", Value, 1 << 20, "2 TiB of 2 MiB pages per node; the model keeps a slot per page"},
		{"hosts.*.machine.hugepages.1GiB", Value, 1 << 14, "16 TiB of 1 GiB pages per node"},
		{"hosts.*.hugepages.2MiB", Value, 1 << 20, "as machine.hugepages"},
		{"hosts.*.hugepages.1GiB", Value, 1 << 14, "as machine.hugepages"},
		{"hosts.*.nics", Items, 16, "a NIC is a port with its queues, rings and pools"},
		{"hosts.*.nics[].mbufs", Value, 1 << 20, "mbufs per rx queue's pool; the model allocates every mbuf's data room"},
		{"hosts.*.nics[].mbuf_size", Value, 65535, "an mbuf's buf_len is a uint16_t (DPDK rte_mbuf_core.h)"},
		{"hosts.*.qat", Items, 16, "devices per host"},
		{"hosts.*.qat[].faults", Items, 1000, "as events"},
		{"hosts.*.qat[].usdm.max_huge_pages", Value, 1 << 20, "2 TiB of 2 MiB pages"},
		{"hosts.*.qat[].usdm.max_huge_pages_per_process", Value, 1 << 20, "as max_huge_pages"},
		{"hosts.*.stack.cores", Items, 256, "a stack instance per core; see MaxStackInstances for the file"},
		{"hosts.*.stack.max_connections", Value, 1 << 20, "50 times Gazelle's 20,000"},
		{"hosts.*.stack.tunables.send_buffer", Value, 64 * mib, "per connection; Linux's tcp_wmem maximum is 4 MiB"},
		{"hosts.*.stack.tunables.recv_buffer", Value, 64 * mib, "per connection; Linux's tcp_rmem maximum is 6 MiB"},
		{"hosts.*.stack.tunables.max_conns", Value, 1 << 20, "as stack.max_connections"},
		{"hosts.*.stack.tunables.syn_backlog", Value, 1 << 20, "as stack.max_connections"},
		{"hosts.*.stack.tunables.max_ooo_ranges", Value, 4096, "out-of-order ranges kept per connection, allocated at its first one"},
		{"hosts.*.apps", Items, 16, "apps per host"},
		{"hosts.*.apps[].pages", Items, 64, "http pages; each is generated when the run starts"},
		{"hosts.*.apps[].pages", Value, 16 * mib, "the http model's largest page"},
		{"hosts.*.apps[].pages", Sum, 64 * mib, "every page of an http app together: 16 × the model's largest"},
		{"hosts.*.apps[].paths", Items, 1024, "wrk paths"},
		{"hosts.*.apps[].commands", Items, 64, "redis-benchmark tests"},
		{"hosts.*.apps[].cores", Items, 256, "oltp-server threads' cores"},
		{"hosts.*.apps[].clients", Value, 100000, "redis-benchmark connections (the model's own most)"},
		{"hosts.*.apps[].connections", Value, 65536, "wrk connections: one source port each"},
		{"hosts.*.apps[].terminals", Value, 100000, "oltp-client connections"},
		{"hosts.*.apps[].devices", Value, 1 << 20, "echo-client connections, as stack.max_connections"},
		{"hosts.*.apps[].ports", Value, 4096, "echo-server and echo-client ports: 64,512 source ports each reach 268 million connections"},
		{"hosts.*.apps[].warehouses", Value, 100000, "oltp-client key space"},
		{"hosts.*.apps[].max_connections", Value, 1 << 20, "oltp-server threads"},
		{"hosts.*.apps[].backlog", Value, 65535, "a listen backlog; the most a 16-bit backlog holds"},
		{"hosts.*.apps[].pipeline", Value, 1024, "redis-benchmark requests in flight per connection"},
		{"hosts.*.apps[].data_size", Value, 1 * mib, "redis-benchmark value size (the model's own most)"},
		{"hosts.*.apps[].gzip.shim.request_size", Value, 16 * mib, "the shim's own most"},
		{"hosts.*.cost.overrides", Items, 1024, "prices; a cost model has fewer operations"},
		{"sweep.grid", Items, 8, "swept keys; the points (variants × grid × seeds) are bounded by MaxSweepPoints"},
		{"sweep.seeds", Value, MaxSweepPoints, "see MaxSweepPoints"},
	}
}

// MaxDuration and MaxWarmup bound the simulated time of a variant's
// measured phase and of its warm-up (see Limits).
const (
	MaxDuration = time.Hour
	MaxWarmup   = time.Hour
)
