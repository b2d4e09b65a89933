package scenario

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/sim/nic"
)

// checkTotals checks the limits no single key carries (MaxPoolBytes,
// MaxMachineCPUs, MaxMachineNodes, MaxQATSlots, MaxStackInstances) on a
// decoded file whose keys are each within Limits, so no product below
// overflows.
func checkTotals(f *File, errAt errAtFunc) error {
	var pools, slots int64
	instances := 0
	for _, hn := range sortedHostNames(f) {
		h := f.Hosts[hn]
		hk := "hosts." + hn
		if err := checkMachine(&h.Machine, hk+".machine", errAt); err != nil {
			return err
		}
		for i, n := range h.NICs {
			b := poolBytes(n.PortConfig)
			pools += b
			if pools > MaxPoolBytes {
				return errAt(fmt.Sprintf("%s.nics[%d]", hk, i), "its rx mbuf pools take %d bytes (rx_queues × mbufs × mbuf_size), which brings the file's pools to %d bytes, over the limit of %d (MaxPoolBytes; docs/scenarios.md, Limits)",
					b, pools, int64(MaxPoolBytes))
			}
		}
		for i := range h.QAT {
			q := &h.QAT[i]
			n := intOr(mapValue(deref(q), "instances"), 256) * intOr(mapValue(deref(q), "ring_depth"), 512)
			slots += n
			if slots > MaxQATSlots {
				return errAt(fmt.Sprintf("%s.qat[%d]", hk, i), "its %d request slots (instances × ring_depth) bring the file's QAT devices to %d, over the limit of %d (MaxQATSlots; docs/scenarios.md, Limits)",
					n, slots, MaxQATSlots)
			}
		}
		if h.Stack != nil {
			instances += len(h.Stack.Cores)
			if instances > MaxStackInstances {
				return errAt(hk+".stack.cores", "%d stack instances in the file, over the limit of %d (MaxStackInstances; docs/scenarios.md, Limits)", instances, MaxStackInstances)
			}
		}
	}
	return nil
}

// poolBytes is what the NIC model allocates for a port's rx pools, with
// its defaults (sim/nic Setup; the rig sets up at least one rx queue).
func poolBytes(c nic.PortConfig) int64 {
	rxq := int64(max(c.RxQueues, 1))
	mbufs := int64(c.Mbufs)
	if mbufs == 0 {
		ring := int64(c.RxRing)
		if ring == 0 {
			if p, err := nic.Preset(c.Model); err == nil {
				ring = int64(p.DefaultRxRing)
			}
		}
		mbufs = 2*ring + 1024
	}
	size := int64(c.MbufSize)
	if size == 0 {
		size = nic.DefaultMbufSize
	}
	return rxq * max(mbufs, 0) * max(size, 0)
}

// checkMachine bounds an inline topology's CPUs and nodes (a preset
// name is a scalar and needs none).
func checkMachine(m *yaml.Node, key string, errAt errAtFunc) error {
	n := deref(m)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	get := func(k string) int64 { return max(intOr(mapValue(n, k), 1), 0) }
	nodes := get("sockets") * get("nodes_per_socket")
	if nodes > MaxMachineNodes {
		return errAt(key+".nodes_per_socket", "%d NUMA nodes (sockets × nodes_per_socket), over the limit of %d (MaxMachineNodes; docs/scenarios.md, Limits)", nodes, MaxMachineNodes)
	}
	if cpus := nodes * get("cores_per_node") * get("threads_per_core"); cpus > MaxMachineCPUs {
		return errAt(key+".cores_per_node", "%d CPUs (sockets × nodes_per_socket × cores_per_node × threads_per_core), over the limit of %d (MaxMachineCPUs; docs/scenarios.md, Limits)", cpus, MaxMachineCPUs)
	}
	return nil
}

// intOr reads an integer node, or gives def when it is absent, 0 or not
// an integer.
func intOr(n *yaml.Node, def int64) int64 {
	v, _ := intValue(deref(n))
	if v == 0 {
		return def
	}
	return v
}
