// Package costops assembles the run's table of cost operations from the
// packages that own them (docs/cost-model.md, "Who owns an operation"):
// hw for the machine and the operating system, sim/cost for Linux's own
// work, and each layer of the product for its own. It is the rig's: it
// imports every owner, which neither the product nor the models may do,
// and passes the table to what names operations (cost files, reports).
// The table is built by a function, never held in a package variable.
package costops

import (
	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/apps/http"
	"github.com/savanna-sim/savanna/apps/redis"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/stackcost"
	"github.com/savanna-sim/savanna/stack/tcp"
	"github.com/savanna-sim/savanna/zlibshim"
)

// Sets returns every owner's operations, in the order of the owners'
// ranges.
func Sets() []hw.CostOpSet {
	return []hw.CostOpSet{
		hw.MachineCostOps(),
		hw.OSCostOps(),
		cost.CostOps(),
		iface.CostOps(),
		tcp.CostOps(),
		stackcost.CostOps(),
		lstack.CostOps(),
		zlibshim.CostOps(),
		appcost.CostOps(),
		redis.CostOps(),
		http.CostOps(),
	}
}

// Build checks sets (no range claimed twice, every op within its owner's
// range, no id or key twice) and joins them into a table.
func Build(sets ...hw.CostOpSet) (*hw.CostTable, error) { return hw.NewCostTable(sets...) }

// Table returns the run's table. The owners' declarations are code, which
// this package's specs check; a failure is a build defect, not input.
func Table() *hw.CostTable {
	t, err := Build(Sets()...)
	if err != nil {
		panic("costops: " + err.Error())
	}
	return t
}

// KernelModelOps returns the product's operations the kernel model
// (sim/cost.KernelPath, KernelSyscalls) prices as Linux's work: a model
// does not import the product, so the rig hands it their ids.
func KernelModelOps() cost.ProductOps {
	return cost.ProductOps{
		FrameRx: iface.CostFrameRx, IPRx: iface.CostIPRx, IPTx: iface.CostIPTx,
		TCPRx: tcp.CostSegmentRx, TCPTx: tcp.CostSegmentTx,
		SocketCall: lstack.CostSocketCall, RingOp: lstack.CostRingOp,
		EpollWaitUser: lstack.CostEpollWait, EpollEventUser: lstack.CostEpollEvent,
		EpollCtl: lstack.CostEpollCtl, HasEpollCtl: true,
	}
}
