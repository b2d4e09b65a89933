package scenario_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/savanna-sim/savanna/rig/scenario"
)

// FuzzParse feeds arbitrary bytes to the scenario loader: it must return
// a scenario or an error, never panic.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("../../scenarios/quickstart.yaml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(base))
	f.Add([]byte(base + "variants:\n  v: {links.0.loss: 0.1, \"hosts.server.apps[0].core\": 3}\n"))
	f.Add([]byte("version: 1\nname: x\nhosts: {a: {machine: {sockets: 1}}}\n"))
	// Reproduction rows: the published scalar's own parser, kinds and
	// sensitivity ops.
	f.Add([]byte(base + "reproduction:\n  - {figure: p99, kind: predicted, published: 14.255, savanna: '1', sensitivity: [syscall]}\n  - {figure: x, kind: derived, published: -1e3, savanna: '2'}\n"))
	// The hostile files of issue 17 (alias bomb, limits, cost files).
	hostile, _ := filepath.Glob("../../cmd/simrun/testdata/hostile/*.yaml")
	for _, p := range hostile {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = scenario.Parse("fuzz.yaml", data)
	})
}
