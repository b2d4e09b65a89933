// Package livetest holds what the live specs (hw/tap, hw/dpdk) share:
// building simrun for a spec to run as a separate process, and reading
// redis-benchmark's output. It is imported by tests only.
package livetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// BuildSimrun builds cmd/simrun with the given build tags into a new
// temporary folder and returns the binary's path and a function that
// removes the folder. The environment variable env, when set, names a
// binary to use instead: nothing is built, and cleanup removes nothing.
func BuildSimrun(env string, tags ...string) (bin string, cleanup func(), err error) {
	if p := os.Getenv(env); p != "" {
		return p, func() {}, nil
	}
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	dir, err := os.MkdirTemp("", "savanna-live-")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "simrun")
	args := []string{"build"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, "-o", bin, "./cmd/simrun")
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin, func() { _ = os.RemoveAll(dir) }, nil
}

// redisBenchmarkLine is a summary line of redis-benchmark -q:
// "NAME: N requests per second, p50=...".
var redisBenchmarkLine = regexp.MustCompile(`([A-Z_]+): ([0-9.]+) requests per second`)

// RedisBenchmarkRates returns the requests per second of each test that
// redis-benchmark -q finished, by test name (PING_INLINE, SET, ...). The
// progress lines it prints between carriage returns are not matched.
func RedisBenchmarkRates(out string) map[string]string {
	found := map[string]string{}
	for _, m := range redisBenchmarkLine.FindAllStringSubmatch(out, -1) {
		found[m[1]] = m[2]
	}
	return found
}

// ServeStat finds "key=N" on the line of simrun serve's final statistics
// that starts with "prefix:" (e.g. "app kv", "nic"), or 0 when there is
// none.
func ServeStat(out, prefix, key string) int64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(prefix) + `:.*\b` + regexp.QuoteMeta(key) + `=(\d+)`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	var n int64
	fmt.Sscan(m[1], &n)
	return n
}
