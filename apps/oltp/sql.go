package oltp

import (
	"bytes"
	"fmt"
	"time"
)

// Class is what a statement costs the server: the kind of work its
// execution does in InnoDB, decided from its text as a much-reduced
// parser would.
type Class uint8

// Statement classes.
const (
	// ClassOther: BEGIN, SET, SELECT without a table, anything else
	// cheap.
	ClassOther Class = iota
	// ClassPointSelect: a SELECT by key (a primary- or unique-key lookup,
	// or a join of such lookups), served from the buffer pool.
	ClassPointSelect
	// ClassRangeSelect: a SELECT that scans (ORDER BY, an aggregate,
	// DISTINCT, a range predicate).
	ClassRangeSelect
	// ClassUpdate, ClassInsert, ClassDelete: row changes with their undo
	// and redo records and index maintenance.
	ClassUpdate
	ClassInsert
	ClassDelete
	// ClassCommit: COMMIT or ROLLBACK (the redo log write and the group
	// commit's bookkeeping).
	ClassCommit
	numClasses
)

// String returns the class's name as figures use it.
func (c Class) String() string {
	switch c {
	case ClassPointSelect:
		return "point_select"
	case ClassRangeSelect:
		return "range_select"
	case ClassUpdate:
		return "update"
	case ClassInsert:
		return "insert"
	case ClassDelete:
		return "delete"
	case ClassCommit:
		return "commit"
	}
	return "other"
}

// firstWord returns the statement's first keyword, upper-cased, skipping
// white space and /* comments */.
func firstWord(sql []byte) []byte {
	for {
		sql = bytes.TrimLeft(sql, " \t\r\n(")
		if !bytes.HasPrefix(sql, []byte("/*")) {
			break
		}
		end := bytes.Index(sql[2:], []byte("*/"))
		if end < 0 {
			return nil
		}
		sql = sql[2+end+2:]
	}
	i := 0
	for i < len(sql) && isWordByte(sql[i]) {
		i++
	}
	return bytes.ToUpper(sql[:i])
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// scanMarkers are the upper-cased text that makes a SELECT a scan rather
// than a lookup.
func scanMarkers() [][]byte {
	return [][]byte{[]byte("ORDER BY"), []byte("COUNT("), []byte("SUM("), []byte("MAX("), []byte("MIN("),
		[]byte("AVG("), []byte("DISTINCT"), []byte("BETWEEN"), []byte("GROUP BY"), []byte("<"), []byte(">")}
}

// Classify decides a statement's class from its text.
func Classify(sql []byte) Class {
	switch string(firstWord(sql)) {
	case "SELECT":
		up := bytes.ToUpper(sql)
		if !bytes.Contains(up, []byte(" FROM ")) {
			return ClassOther
		}
		for _, m := range scanMarkers() {
			if bytes.Contains(up, m) {
				return ClassRangeSelect
			}
		}
		return ClassPointSelect
	case "UPDATE":
		return ClassUpdate
	case "INSERT", "REPLACE":
		return ClassInsert
	case "DELETE":
		return ClassDelete
	case "COMMIT", "ROLLBACK":
		return ClassCommit
	}
	return ClassOther
}

// SelectColumns returns the number of items in a SELECT's select list
// (commas at the top level before FROM, plus one), for the result set's
// shape; at least 1.
func SelectColumns(sql []byte) int {
	up := bytes.ToUpper(sql)
	from := bytes.Index(up, []byte(" FROM "))
	if from < 0 {
		from = len(up)
	}
	n, depth := 1, 0
	for _, c := range up[:from] {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
	}
	return n
}

// QueryCosts are the CPU time one statement of each class takes in the
// server's query engine (parse, optimise, execute against a warm buffer
// pool), on the cost model's reference core. docs/oltp.md gives each
// default's source; none comes from the Gazelle article's MySQL figures.
type QueryCosts struct {
	PointSelect time.Duration `yaml:"point_select"`
	RangeSelect time.Duration `yaml:"range_select"`
	Update      time.Duration `yaml:"update"`
	Insert      time.Duration `yaml:"insert"`
	Delete      time.Duration `yaml:"delete"`
	Commit      time.Duration `yaml:"commit"`
	Other       time.Duration `yaml:"other"`
}

// DefaultQueryCosts returns the documented defaults (docs/oltp.md).
func DefaultQueryCosts() QueryCosts {
	return QueryCosts{
		PointSelect: 20 * time.Microsecond,
		RangeSelect: 50 * time.Microsecond,
		Update:      65 * time.Microsecond,
		Insert:      65 * time.Microsecond,
		Delete:      65 * time.Microsecond,
		Commit:      30 * time.Microsecond,
		Other:       5 * time.Microsecond,
	}
}

// Of returns the cost of a class.
func (q QueryCosts) Of(c Class) time.Duration {
	switch c {
	case ClassPointSelect:
		return q.PointSelect
	case ClassRangeSelect:
		return q.RangeSelect
	case ClassUpdate:
		return q.Update
	case ClassInsert:
		return q.Insert
	case ClassDelete:
		return q.Delete
	case ClassCommit:
		return q.Commit
	}
	return q.Other
}

// withDefaults fills the classes left at zero.
func (q QueryCosts) withDefaults() QueryCosts {
	d := DefaultQueryCosts()
	for _, f := range []struct{ v, def *time.Duration }{
		{&q.PointSelect, &d.PointSelect}, {&q.RangeSelect, &d.RangeSelect}, {&q.Update, &d.Update},
		{&q.Insert, &d.Insert}, {&q.Delete, &d.Delete}, {&q.Commit, &d.Commit}, {&q.Other, &d.Other},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return q
}

// Validate checks the costs; errors name the key.
func (q QueryCosts) Validate() error {
	for _, f := range []struct {
		key string
		v   time.Duration
	}{
		{"point_select", q.PointSelect}, {"range_select", q.RangeSelect}, {"update", q.Update},
		{"insert", q.Insert}, {"delete", q.Delete}, {"commit", q.Commit}, {"other", q.Other},
	} {
		if f.v < 0 || f.v > time.Second {
			return fmt.Errorf("costs.%s: %v is outside 0..1s", f.key, f.v)
		}
	}
	return nil
}
