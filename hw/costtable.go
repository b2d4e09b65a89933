package hw

import (
	"errors"
	"fmt"
	"sort"
)

// CostOpInfo describes one operation for the run's table.
type CostOpInfo struct {
	// Op is the operation's id, within its owner's range.
	Op CostOp
	// Key names it in cost-model files and reports ("stack_tcp_rx"):
	// lower case, digits and underscores. Keys never change: cost files
	// and reports are written against them.
	Key string
	// Doc says what one unit is, in a line.
	Doc string
}

// CostOpSet is one owner's operations: what its CostOps function returns.
type CostOpSet struct {
	// Base is the owner's range (OpsTCP ...): its ops are Base up to
	// Base+OpsCap-1.
	Base CostOp
	// Ops are the owner's operations.
	Ops []CostOpInfo
}

// CostTable is the run's table of operations: every owner's ops with
// their keys. The rig builds it once from each owner's CostOpSet
// (internal/costops) and passes it to what names ops: cost-model files
// and reports. It is read-only once built. Charging never consults it.
type CostTable struct {
	info  [NumCostOps]CostOpInfo
	ops   []CostOpInfo
	byKey map[string]CostOp
}

// NewCostTable checks the owners' sets and joins them: each set's base is
// an owner range that no other set claims, each op lies within its set's
// range, and no id or key is declared twice. Every problem is reported.
func NewCostTable(sets ...CostOpSet) (*CostTable, error) {
	t := &CostTable{byKey: map[string]CostOp{}}
	var errs []error
	claimed := map[CostOp]bool{}
	for _, s := range sets {
		owner := ownerName(s.Base)
		if owner == "" || s.Base%OpsCap != 0 {
			errs = append(errs, fmt.Errorf("cost ops: base %d is not an owner range (a multiple of %d below %d)", s.Base, OpsCap, NumCostOps))
			continue
		}
		if claimed[s.Base] {
			errs = append(errs, fmt.Errorf("cost ops: range %s (%d..%d) declared by two owners", owner, s.Base, s.Base+OpsCap-1))
			continue
		}
		claimed[s.Base] = true
		for _, o := range s.Ops {
			if err := t.add(owner, s.Base, o); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.Slice(t.ops, func(i, j int) bool { return t.ops[i].Op < t.ops[j].Op })
	return t, nil
}

// add checks one op of owner's range at base and enters it.
func (t *CostTable) add(owner string, base CostOp, o CostOpInfo) error {
	switch {
	case o.Op < base || o.Op >= base+OpsCap:
		return fmt.Errorf("cost ops: %s's op %q is %d, outside its range %d..%d", owner, o.Key, o.Op, base, base+OpsCap-1)
	case !validKey(o.Key):
		return fmt.Errorf("cost ops: %s's op %d has key %q; a key is lower case letters, digits and underscores", owner, o.Op, o.Key)
	case o.Doc == "":
		return fmt.Errorf("cost ops: %s's op %q has no doc", owner, o.Key)
	case t.info[o.Op].Key != "":
		return fmt.Errorf("cost ops: %s's op %q is %d, which %q already is", owner, o.Key, o.Op, t.info[o.Op].Key)
	}
	if _, dup := t.byKey[o.Key]; dup {
		return fmt.Errorf("cost ops: key %q declared twice (%s's op %d)", o.Key, owner, o.Op)
	}
	t.info[o.Op] = o
	t.byKey[o.Key] = o.Op
	t.ops = append(t.ops, o)
	return nil
}

// validKey reports whether k can be a cost-file key and a report path
// segment (no dots).
func validKey(k string) bool {
	if k == "" || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for _, c := range []byte(k) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// Ops returns every op, by id.
func (t *CostTable) Ops() []CostOpInfo { return append([]CostOpInfo(nil), t.ops...) }

// Len is the number of ops.
func (t *CostTable) Len() int { return len(t.ops) }

// Info returns op's entry; ok is false for an id no owner declares.
func (t *CostTable) Info(op CostOp) (CostOpInfo, bool) {
	if int(op) >= NumCostOps || t.info[op].Key == "" {
		return CostOpInfo{}, false
	}
	return t.info[op], true
}

// Name returns op's key, or "" for an id no owner declares.
func (t *CostTable) Name(op CostOp) string {
	if int(op) >= NumCostOps {
		return ""
	}
	return t.info[op].Key
}

// Lookup finds an op by its key.
func (t *CostTable) Lookup(key string) (CostOp, bool) {
	op, ok := t.byKey[key]
	return op, ok
}
