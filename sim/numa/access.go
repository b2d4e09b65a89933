package numa

// Access costs. SLIT distances are relative: 10 is a node's own memory
// and 20 "twice as far" (ACPI 6.5, 5.2.17). The cost model prices
// hw.CostRemoteNUMAByte as the extra cost of one byte read at distance 20,
// so a byte at distance d costs (d-10)/10 of that op: nothing locally, a
// fifth at 12 (Kunpeng's other die), the full price at 20, 1.4 times at 24.
// This linear reading of the SLIT is what Linux's scheduler and
// numa_distance users assume too; it is a model, not a measurement.

// AccessFactor is how much slower the CPU reaches memory on memNode than
// its own: distance/10, so 1.0 locally and 2.0 at SLIT 20. An unknown CPU
// or node gives 1.0 (no penalty known); check ids with HasCPU/HasNode
// when configuring.
func (t *Topology) AccessFactor(fromCPU, memNode int) float64 {
	d := t.Distance(t.NodeOfCPU(fromCPU), memNode)
	if d < LocalDistance {
		return 1
	}
	return float64(d) / LocalDistance
}

// RemoteBytes returns how many units of hw.CostRemoteNUMAByte to charge
// for cpu touching n bytes on node: 0 when local, n*(d-10)/10 rounded to
// the nearest byte otherwise. Unknown ids and n <= 0 give 0.
func (t *Topology) RemoteBytes(cpu, node int, n int64) int64 {
	d := t.Distance(t.NodeOfCPU(cpu), node)
	if d <= LocalDistance || n <= 0 {
		return 0
	}
	extra := int64(d - LocalDistance)
	// n*extra/10 without overflowing for any realistic n.
	q, r := n/LocalDistance, n%LocalDistance
	return q*extra + (r*extra+LocalDistance/2)/LocalDistance
}

// LocalCPUs returns the CPUs local to a device on node, as
// /sys/bus/pci/devices/*/local_cpulist gives them: the node's CPUs, or
// every CPU for node -1 (a device with no NUMA affinity) or an unknown
// node.
func (t *Topology) LocalCPUs(node int) []int {
	if cpus := t.CPUsOfNode(node); node >= 0 && t.HasNode(node) {
		return cpus
	}
	return t.CPUIDs()
}
