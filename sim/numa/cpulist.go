package numa

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxListID bounds the ids a CPU or node list may name. Linux's
// NR_CPUS is at most 8192 on the distributions' kernels; the bound keeps
// a malformed list ("0-4000000000") from allocating without limit.
const maxListID = 1 << 16

// ParseList parses a Linux cpulist/nodelist ("0-3,8-11,16", as in
// /sys/devices/system/cpu/online and nodeN/cpulist; see the kernel's
// Documentation/admin-guide/cputopology.rst and bitmap_parselist) into
// sorted, distinct ids. An empty string (a node without CPUs) gives an
// empty list. Strides ("0-7:2") are not accepted: sysfs never writes them.
func ParseList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseID(lo)
		if err != nil {
			return nil, fmt.Errorf("list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = parseID(hi); err != nil {
				return nil, fmt.Errorf("list %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("list %q: range %s is backwards", s, part)
			}
		}
		for id := a; id <= b; id++ {
			out = append(out, id)
		}
		if len(out) > maxListID {
			return nil, fmt.Errorf("list %q: more than %d ids", s, maxListID)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func parseID(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not an id", s)
	}
	if n < 0 || n >= maxListID {
		return 0, fmt.Errorf("id %d out of range [0, %d)", n, maxListID)
	}
	return n, nil
}

// FormatList writes ids in the kernel's compact form ("0-23,48-71"). The
// ids need not be sorted; duplicates are written once.
func FormatList(ids []int) string {
	s := slices.Clone(ids)
	slices.Sort(s)
	s = slices.Compact(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}
