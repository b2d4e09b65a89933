package rig_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
)

// bundled loads a bundled scenario, with each old→new edit applied in
// order (each old must occur in the file).
func bundled(name string, edits ...string) *scenario.Scenario {
	return fromText(name+".yaml", bundledText(name), edits...)
}

// redisBenchThreads is gazelle-redis's client (redis-benchmark's two
// threads) and redisBenchOneThread the same with one: a short run whose
// tests must end within tens of milliseconds needs one thread, since with
// several a test ends at the next 250 ms throughput tick after its last
// reply.
const (
	redisBenchThreads   = "        threads: 2\n        cores: [0, 1]\n"
	redisBenchOneThread = "        threads: 1\n        cores: [0]\n"
)

// bundledText is a bundled scenario's file.
func bundledText(name string) string {
	data, err := os.ReadFile(filepath.Join("..", "scenarios", name+".yaml"))
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

// fromText parses a scenario from text, with old→new edits applied.
func fromText(file, text string, edits ...string) *scenario.Scenario {
	Expect(len(edits)%2).To(Equal(0), "edits come in old, new pairs")
	for i := 0; i < len(edits); i += 2 {
		Expect(text).To(ContainSubstring(edits[i]))
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	s, err := scenario.Parse(file, []byte(text))
	Expect(err).NotTo(HaveOccurred())
	return s
}

// runScenario runs every variant and returns the report.
func runScenario(s *scenario.Scenario) *report.Report {
	r, err := rig.Run(s, rig.Options{})
	Expect(err).NotTo(HaveOccurred())
	return r
}
