package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/scenarios"
)

// simrun runs the CLI in-process and returns exit code, stdout, stderr.
func simrun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// scenarioWith writes the quickstart with one edit into a temp file.
func scenarioWith(old, new string) string { return scenarioFrom("quickstart", old, new) }

// scenarioFrom writes a bundled scenario with one edit into a temp file.
func scenarioFrom(name, old, new string) string {
	data, err := os.ReadFile("../../scenarios/" + name + ".yaml")
	Expect(err).NotTo(HaveOccurred())
	text := string(data)
	if old != "" {
		Expect(text).To(ContainSubstring(old))
		text = strings.Replace(text, old, new, 1)
	}
	path := filepath.Join(GinkgoT().TempDir(), "edited.yaml")
	Expect(os.WriteFile(path, []byte(text), 0o644)).To(Succeed())
	return path
}

var _ = Describe("simrun run", func() {
	It("runs the quickstart, prints a report and exits 0", func() {
		code, out, errOut := simrun("run", "../../scenarios/quickstart.yaml")
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("pktgen.rtt.p99_us"))
		Expect(out).To(ContainSubstring("PASS  default.server.nic.eth0.imissed == 0"))
	})

	It("gives byte-identical JSON for the same seed, and other figures for another", func() {
		_, a, _ := simrun("run", "quickstart", "--format", "json")
		_, b, _ := simrun("run", "quickstart", "--format", "json")
		Expect(a).To(Equal(b))
		_, c, _ := simrun("run", "quickstart", "--format", "json", "--seed", "7")
		Expect(c).NotTo(Equal(a))
		Expect(c).To(ContainSubstring(`"seed": 7`))
	})

	It("names file, line, column and key of a misspelt key, and exits 2", func() {
		path := scenarioWith("    latency: 10us", "    latncy: 10us")
		code, _, errOut := simrun("run", path)
		Expect(code).To(Equal(2))
		Expect(errOut).To(MatchRegexp(`edited\.yaml:\d+:5: key "links\[0\]\.latncy": unknown key; expected one of: .*latency`))
	})

	DescribeTable("names the stack key of a bad placement or neighbour setting, and exits 2",
		func(old, new, want string) {
			code, _, errOut := simrun("run", scenarioFrom("numa-placement", old, new))
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring(want))
		},
		Entry("mbuf_node", "stack: {kind: lstack, cores: [8, 9, 10, 11]}", "stack: {kind: lstack, cores: [8, 9, 10, 11], mbuf_node: far}",
			`key "hosts.server.stack.mbuf_node": mbuf_node "far"; expected core`),
		Entry("neighbors", "stack: {kind: lstack, cores: [8, 9, 10, 11]}", "stack: {kind: lstack, cores: [8, 9, 10, 11], neighbors: lukewarm}",
			`key "hosts.server.stack.neighbors": neighbors "lukewarm"; expected cold`),
	)

	It("exits 2 when an expectation names a figure that does not exist", func() {
		path := scenarioWith("default.pktgen.lost < 40", "default.pktgen.lostt < 40")
		code, _, errOut := simrun("run", path)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("figure default.pktgen.lostt does not exist; default.pktgen has:"))
	})

	It("exits 1 on a false expectation and prints both sides' values", func() {
		path := scenarioWith("default.pktgen.rtt.p99_us < 25", "default.pktgen.rtt.p99_us < default.pktgen.rtt.p50_us / 2")
		code, out, _ := simrun("run", path)
		Expect(code).To(Equal(1))
		Expect(out).To(MatchRegexp(`FAIL  default.pktgen.rtt.p99_us < default.pktgen.rtt.p50_us / 2\n\s+left default.pktgen.rtt.p99_us = 2\d\.\d+, right default.pktgen.rtt.p50_us / 2 = 10\.\d+`))
	})

	It("writes report.json, report.md and the capture with --out", func() {
		dir := GinkgoT().TempDir()
		code, _, errOut := simrun("run", "quickstart", "--out", dir)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		for _, f := range []string{"report.json", "report.md", "report.html", "timing.json", "default.cpu.folded", "default.server.eth0.pcapng"} {
			Expect(filepath.Join(dir, f)).To(BeAnExistingFile())
		}
		page, err := os.ReadFile(filepath.Join(dir, "report.html"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(page)).To(ContainSubstring("Latency CDF per variant"))
		Expect(string(page)).To(ContainSubstring("CPU busy per host and variant"))
		// Over time: frames per second of pktgen and testpmd, and a panel
		// per core of each host.
		Expect(string(page)).To(ContainSubstring("Throughput over time (frames received)"))
		Expect(string(page)).To(ContainSubstring("Throughput over time (frames forwarded)"))
		Expect(string(page)).To(ContainSubstring("CPU per core over time: default, host server"))
		// Two flame graphs: one CPU profile per host; every plot's title
		// is a caption the page wraps, and the summary comes first.
		Expect(strings.Count(string(page), "<svg")).To(Equal(8))
		Expect(strings.Count(string(page), "<figcaption>")).To(Equal(8))
		Expect(strings.Index(string(page), `id="summary"`)).To(BeNumerically("<", strings.Index(string(page), `id="plots"`)))
		Expect(string(page)).To(ContainSubstring("CPU profile: default, host server"))
	})

	It("keeps wall-clock figures out of report.json unless --timing asks for them", func() {
		dir := GinkgoT().TempDir()
		code, _, _ := simrun("run", "quickstart", "--out", dir)
		Expect(code).To(Equal(0))
		report, err := os.ReadFile(filepath.Join(dir, "report.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(report)).NotTo(ContainSubstring("wall_seconds"))
		var timing struct {
			Variants []struct {
				Variant              string  `json:"variant"`
				SimSeconds           float64 `json:"sim_seconds"`
				SimToWall            float64 `json:"sim_to_wall"`
				Packets              uint64  `json:"sim_packets"`
				PacketsPerWallSecond float64 `json:"sim_packets_per_wall_second"`
			} `json:"variants"`
		}
		data, err := os.ReadFile(filepath.Join(dir, "timing.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(data, &timing)).To(Succeed())
		Expect(timing.Variants).To(HaveLen(1))
		v := timing.Variants[0]
		Expect(v.Variant).To(Equal("default"))
		Expect(v.SimSeconds).To(BeNumerically(">", 0))
		Expect(v.Packets).To(BeNumerically(">", 1000))
		Expect(v.SimToWall).To(BeNumerically(">", 0))
		Expect(v.PacketsPerWallSecond).To(BeNumerically(">", 0))

		code, out, errOut := simrun("run", "quickstart", "--format", "json", "--timing")
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring(`"timing"`))
		Expect(out).To(ContainSubstring(`"sim_to_wall"`))
		Expect(errOut).To(MatchRegexp(`simrun: default: .* simulated s in .* wall s \(.*×\), \d+ simulated packets per wall second`))
	})

	It("wires QAT devices and their fault events", func() {
		code, out, errOut := simrun("run", "testdata/qat-reset.yaml")
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		Expect(out).To(MatchRegexp(`web\.qat\.devices\.0\.resets\s+1`))
		Expect(out).To(MatchRegexp(`web\.qat\.devices\.0\.instances\s+64`))
		path := filepath.Join(GinkgoT().TempDir(), "bad.yaml")
		data, _ := os.ReadFile("testdata/qat-reset.yaml")
		Expect(os.WriteFile(path, []byte(strings.Replace(string(data), "kind: reset", "kind: meltdown", 1)), 0o644)).To(Succeed())
		code, _, errOut = simrun("run", path)
		Expect(code).To(Equal(2))
		Expect(errOut).To(MatchRegexp(`bad\.yaml:\d+:\d+: key "events\[0\]\.qat_fault\.kind": `))
	})

	It("prints the summary first, then only the figures --figures selects", func() {
		code, out, errOut := simrun("run", "quickstart", "--figures", "pktgen.rtt.*", "--figures", "default.server.nic.**.imissed")
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		summary, all, ok := strings.Cut(out, "ALL FIGURES matching --figures pktgen.rtt.* default.server.nic.**.imissed (8)\n")
		Expect(ok).To(BeTrue(), out)
		Expect(summary).To(ContainSubstring("expectations: 4 of 4 held"))
		Expect(summary).To(MatchRegexp(`pktgen\.tx_pps\s+1\x{202f}000\x{202f}000\n`), "the headline figures, whatever the filter")
		Expect(all).To(MatchRegexp(`pktgen\.rtt\.p99_us\s+21\.97 µs\n`))
		Expect(all).To(ContainSubstring("server.nic.eth0.imissed"))
		Expect(all).NotTo(ContainSubstring("tx_pps"))

		code, out, _ = simrun("run", "quickstart", "--format", "json", "--figures", "**.p99_us")
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring(`"p99_us": 21.967`), "JSON keeps exact values")
		Expect(out).NotTo(ContainSubstring(`"tx_pps":`))
	})

	It("exits 2 naming a --figures glob that matches nothing, or is malformed", func() {
		code, _, errOut := simrun("run", "quickstart", "--figures", "pktgen.*", "--figures", "pktgen.rtt.p99_ns")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`--figures "pktgen.rtt.p99_ns" matches no figure`))
		code, _, errOut = simrun("run", "quickstart", "--figures", "pktgen.[")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`figure glob "pktgen.["`))
	})

	It("rejects a bad flag value and a missing file with exit 2", func() {
		code, _, errOut := simrun("run", "quickstart", "--format", "xml")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`--format "xml"`))
		code, _, errOut = simrun("run", "nope.yaml")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("no such file, and no bundled scenario"))
	})

	It("runs a bundled scenario by name from a folder that holds an --out folder of that name", func() {
		dir := GinkgoT().TempDir()
		Expect(os.Mkdir(filepath.Join(dir, "quickstart"), 0o755)).To(Succeed())
		wd, err := os.Getwd()
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Chdir(dir)).To(Succeed())
		DeferCleanup(os.Chdir, wd)
		code, out, errOut := simrun("run", "quickstart", "--figures", "pktgen.tx_pps")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(ContainSubstring("scenario quickstart (seed 42"))
	})
})

var _ = Describe("the bundled scenarios", func() {
	It("each run with every expectation holding, and give the same report.json twice", func() {
		for _, name := range scenarios.Names() {
			if name == "million-connections" {
				// A minute of CPU a run: rig's slow million-connections
				// spec runs it once, and its 2,000-device cut twice.
				continue
			}
			code, out, errOut := simrun("run", name, "--format", "json")
			Expect(errOut).To(BeEmpty(), name)
			Expect(code).To(Equal(0), "%s:\n%s", name, out)
			_, again, _ := simrun("run", name, "--format", "json")
			Expect(again).To(Equal(out), "%s: a second run with the same seed differs", name)
		}
	})
})

var _ = Describe("simrun validate, list, topo and version", func() {
	It("validates without running, catching errors only the models find", func() {
		code, out, _ := simrun("validate", "quickstart")
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("valid (1 variant(s), 4 expectation(s))"))
		path := scenarioWith("machine: kunpeng920-4826-2p", "machine: kunpeng921")
		code, _, errOut := simrun("validate", path)
		Expect(code).To(Equal(2))
		Expect(errOut).To(MatchRegexp(`edited\.yaml:\d+:\d+: key "hosts\.\w+\.machine": `))
	})

	It("lists bundled scenarios with their descriptions and the app kinds", func() {
		code, out, _ := simrun("list")
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("quickstart"))
		Expect(out).To(ContainSubstring("A short tour of Savanna"))
		Expect(out).To(ContainSubstring("pktgen"))
		Expect(out).To(ContainSubstring("kunpeng920-4826-2p"))
	})

	It("prints a preset's topology, as text and JSON", func() {
		code, out, _ := simrun("topo", "kunpeng920-4826-2p")
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("node distances:"))
		code, out, _ = simrun("topo", "--json", "xeon-e5-2650v2-2p")
		Expect(code).To(Equal(0))
		Expect(out).To(HavePrefix("{"))
		code, _, errOut := simrun("topo", "nosuch")
		Expect(code).To(Equal(2))
		Expect(errOut).NotTo(BeEmpty())
	})

	It("prints its version", func() {
		code, out, _ := simrun("version")
		Expect(code).To(Equal(0))
		Expect(out).To(HavePrefix("savanna "))
	})
})
