package calibrate

import (
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/costops"
)

// opName is the cost-file key of op ("" for an id no owner declares).
func opName(t *hw.CostTable, op hw.CostOp) string { return t.Name(op) }

// opTable is the run's table of operations, which cost files are read
// against.
func opTable() *hw.CostTable { return costops.Table() }
