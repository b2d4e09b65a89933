package oltp

import (
	"bytes"
	"strings"
)

// LockTarget returns the row an UPDATE, a DELETE or a SELECT ... FOR
// UPDATE locks: its table and a key naming the row by the table and the
// integer literals of the WHERE clause's equalities, in order
// (bmsql_district:3:7 for "... WHERE d_w_id = 3 AND d_id = 7"). ok is
// false for a statement that locks nothing in the model: a plain SELECT
// (a consistent read, InnoDB's MVCC, takes no lock), an INSERT (a new row
// nobody else waits for; gap and insert-intention locks are not
// modelled) and a statement without such a WHERE clause.
func LockTarget(sql []byte, c Class) (table, key string, ok bool) {
	up := bytes.ToUpper(sql)
	var after []byte
	switch c {
	case ClassUpdate:
		after = []byte("UPDATE ")
	case ClassDelete:
		after = []byte(" FROM ")
	case ClassPointSelect, ClassRangeSelect:
		if !bytes.HasSuffix(bytes.TrimRight(up, " \t\r\n;"), []byte("FOR UPDATE")) {
			return "", "", false
		}
		after = []byte(" FROM ")
	default:
		return "", "", false
	}
	i := bytes.Index(up, after)
	if i < 0 {
		return "", "", false
	}
	rest := bytes.TrimLeft(sql[i+len(after):], " \t\r\n")
	n := 0
	for n < len(rest) && isWordByte(rest[n]) {
		n++
	}
	if n == 0 {
		return "", "", false
	}
	table = strings.ToLower(string(rest[:n]))
	w := bytes.Index(up[i:], []byte(" WHERE "))
	if w < 0 {
		return "", "", false
	}
	var b strings.Builder
	b.WriteString(table)
	vals := 0
	where := sql[i+w+len(" WHERE "):]
	for j := 0; j < len(where); j++ {
		if where[j] != '=' {
			continue
		}
		k := j + 1
		for k < len(where) && where[k] == ' ' {
			k++
		}
		s := k
		for k < len(where) && where[k] >= '0' && where[k] <= '9' {
			k++
		}
		// An integer literal ends at a space, a parenthesis or the end;
		// a column (d_next_o_id - 20) or a decimal is not a key.
		if k == s || (k < len(where) && where[k] != ' ' && where[k] != ')') {
			continue
		}
		b.WriteByte(':')
		b.Write(where[s:k])
		vals++
		j = k - 1
	}
	if vals == 0 {
		return "", "", false
	}
	return table, b.String(), true
}
