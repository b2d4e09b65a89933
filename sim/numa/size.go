package numa

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Binary size units.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
)

// sizeUnit returns the multiplier of a size suffix. KB, MB and GB are read
// as binary units, as the Linux tools (free, numactl, meminfo's "kB") and
// DPDK's --socket-mem do; a memory size is never decimal in practice.
func sizeUnit(u string) (int64, bool) {
	switch u {
	case "", "B":
		return 1, true
	case "KiB", "KB", "K", "kB":
		return KiB, true
	case "MiB", "MB", "M":
		return MiB, true
	case "GiB", "GB", "G":
		return GiB, true
	case "TiB", "TB", "T":
		return TiB, true
	}
	return 0, false
}

// ParseSize parses a memory size such as "64GiB", "2 MiB", "512MB" or
// "4096" (bytes). Accepted units: B, KiB, MiB, GiB, TiB and KB, MB, GB, TB
// (read as binary, see sizeUnit), and the one-letter K, M, G, T. The
// number may have a fractional part if the result is a whole number of
// bytes ("1.5GiB"). Negative sizes and overflow are errors.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("size %q: empty", s)
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	if num == "" {
		return 0, fmt.Errorf("size %q: no number (want e.g. 64GiB)", s)
	}
	mul, ok := sizeUnit(unit)
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", s, unit)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("size %q: %w", s, err)
		}
		if n > math.MaxInt64/mul {
			return 0, fmt.Errorf("size %q: too large", s)
		}
		return n * mul, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	v := f * float64(mul)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("size %q: not a whole number of bytes", s)
	}
	return int64(v), nil
}

// FormatSize writes a size in the largest binary unit that divides it
// exactly ("2 MiB", "1 GiB", "3000 B"), the form error messages use.
func FormatSize(n int64) string {
	for _, u := range []struct {
		mul  int64
		name string
	}{{TiB, "TiB"}, {GiB, "GiB"}, {MiB, "MiB"}, {KiB, "KiB"}} {
		if n != 0 && n%u.mul == 0 {
			return fmt.Sprintf("%d %s", n/u.mul, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// formatMiB writes a size in MiB, with a fraction only when needed, as
// the hugepage exhaustion message and numactl-style output show it.
func formatMiB(n int64) string {
	if n%MiB == 0 {
		return fmt.Sprintf("%d MiB", n/MiB)
	}
	return fmt.Sprintf("%.2f MiB", float64(n)/float64(MiB))
}
