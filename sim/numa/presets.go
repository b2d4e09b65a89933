package numa

import (
	"fmt"
	"slices"
)

// HostPreset is the preset name that reads the running machine.
const HostPreset = "host"

// smtYieldIvyBridge is the source of the Xeon preset's SMT yield.
const smtYieldIvyBridge = "Intel: Hyper-Threading gains up to 30% on server benchmarks (S. D. Casey, " +
	"'How to Determine the Effectiveness of Hyper-Threading Technology with an Application', Intel, 2011, " +
	"citing Intel Technology Journal 6(1)); independent runs on Nehalem/Ivy Bridge cores (H. Wong, " +
	"'Hyper-Threading Performance', blog.stuffedcow.net, 2011) spread from ~1.0x to ~1.4x with a typical " +
	"1.2-1.3x; 1.25 taken for network-stack and kernel code, which stalls on memory and leaves issue slots free"

// presetDef is one built-in machine. Every figure's source is in
// docs/numa.md.
type presetDef struct {
	name, description string
	spec              Spec
	notes             []string
}

// presets returns the built-in machines. A function, not a table
// variable, so the package holds no mutable state.
func presets() []presetDef {
	return []presetDef{
		{
			name:        "kunpeng920-4826-2p",
			description: "2 x HiSilicon Kunpeng 920-4826 (TaiShan 2280 v2): 96 cores, 4 NUMA nodes, no SMT, 2.6 GHz, 384 GiB (the Gazelle article's server)",
			spec: Spec{
				Sockets: 2, NodesPerSocket: 2, CoresPerNode: 24, ThreadsPerCore: 1, GHz: 2.6,
				// The Gazelle server's 12 x 32 GB DDR4-2666, split
				// evenly over the four nodes.
				MemoryPerNode: "96GiB",
				// numactl -H on a TaiShan 2280 v2 with Kunpeng 920-4826,
				// as posted to LKML: 12 to the other die of the socket
				// (on-chip network), 20-24 across the Hydra links.
				Distances: [][]int{
					{10, 12, 20, 22},
					{12, 10, 22, 24},
					{20, 22, 10, 12},
					{22, 24, 12, 10},
				},
				// The Gazelle article's deployment steps reserve 8192 2 MiB
				// pages; a global nr_hugepages is spread evenly over the
				// nodes with memory, 2048 each.
				Hugepages: &HugepageConfig{Pages2M: []int64{2048}},
			},
			notes: []string{
				"core ids count 0-47 within each socket; the real machine's sysfs core_id values may differ",
				"hugepages: 8192 x 2 MiB as in the Gazelle article's deployment steps, spread 2048 per node as a global nr_hugepages is",
			},
		},
		{
			name:        "xeon-e5-2650v2-2p",
			description: "2 x Intel Xeon E5-2650 v2 (Ivy Bridge-EP): 16 cores, 32 threads, 2 NUMA nodes, 2.6 GHz (the Tengine/QAT article's server)",
			spec: Spec{
				Sockets: 2, NodesPerSocket: 1, CoresPerNode: 8, ThreadsPerCore: 2, GHz: 2.6,
				// Assumption: the article gives no memory size.
				MemoryPerNode: "64GiB",
				// Two-socket Xeon E5 firmware commonly reports 10/21.
				// Linux's default without a SLIT would be 10/20.
				Distances: [][]int{
					{10, 21},
					{21, 10},
				},
				// Assumption: 1024 x 2 MiB pages in all for the QAT
				// driver's USDM, 512 per node.
				Hugepages: &HugepageConfig{Pages2M: []int64{512}},
				// Two busy Hyper-Threads of one Ivy Bridge core do 1.25
				// times one thread's work (docs/numa.md has the sources).
				SMTYield:       1.25,
				smtYieldSource: smtYieldIvyBridge,
			},
			notes: []string{
				"memory 64 GiB per node is an assumption: the article does not give it",
				"SLIT 10/21 as two-socket Xeon E5 firmware commonly reports; Linux uses 10/20 without a SLIT",
				"hugepages: 1024 x 2 MiB in all (512 per node) is an assumption",
				"core ids count 0-7 within each socket; real Ivy Bridge-EP sysfs core_id values may have gaps",
			},
		},
	}
}

// PresetNames returns the built-in machine names, sorted ("host" is not
// among them: it is not a fixed machine).
func PresetNames() []string {
	var names []string
	for _, p := range presets() {
		names = append(names, p.name)
	}
	slices.Sort(names)
	return names
}

// PresetDescription returns a preset's one-line description.
func PresetDescription(name string) (string, bool) {
	if name == HostPreset {
		return "the machine this runs on, read from /sys/devices/system/{node,cpu}", true
	}
	for _, p := range presets() {
		if p.name == name {
			return p.description, true
		}
	}
	return "", false
}

func isPreset(name string) bool {
	return slices.Contains(PresetNames(), name)
}

// Preset returns a built-in machine by name, or the running host for
// "host" (ReadHost("/sys")).
func Preset(name string) (*Topology, error) {
	if name == HostPreset {
		return ReadHost("/sys")
	}
	for _, p := range presets() {
		if p.name != name {
			continue
		}
		spec := p.spec
		spec.Name = p.name
		t, err := spec.Build()
		if err != nil {
			return nil, fmt.Errorf("preset %q: %w", name, err) // a defect the tests catch
		}
		t.Description = p.description
		t.Notes = slices.Clone(p.notes)
		return t, nil
	}
	return nil, fmt.Errorf("unknown topology preset %q (known: %v and %q)", name, PresetNames(), HostPreset)
}
