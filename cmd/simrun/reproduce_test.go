package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/sim/cost"
)

// reproFixture writes the quickstart, priced by a copy of the default
// cost file in which nic_rx_packet has uncertainty u (none when u is
// ""), with reproduction rows, into a folder of its own; it returns the
// scenario's path and the cost file's bytes.
func reproFixture(u string) (string, []byte) {
	dir := GinkgoT().TempDir()
	costs := string(cost.DefaultBytes())
	const rx = "  nic_rx_packet:\n    {value: 30, unit: cycles, "
	Expect(costs).To(ContainSubstring(rx), "the default file's nic_rx_packet entry moved: update this fixture")
	if u != "" {
		costs = strings.Replace(costs, rx, rx+"uncertainty: "+u+", ", 1)
	}
	Expect(os.WriteFile(filepath.Join(dir, "costs.yaml"), []byte(costs), 0o644)).To(Succeed())
	data, err := os.ReadFile("../../scenarios/quickstart.yaml")
	Expect(err).NotTo(HaveOccurred())
	text := string(data)
	text = strings.Replace(text, "    machine: kunpeng920-4826-2p\n", "    machine: kunpeng920-4826-2p\n    cost: {file: costs.yaml, overrides: {syscall: {value: 90, unit: ns, source: a test's}}}\n", 1)
	text = strings.Replace(text, "    machine: kunpeng920-4826-2p\n    nics:\n      - {name: eth0, model: hi1822-25g, numa_node: 0, ip: 10.0.0.2/24}",
		"    machine: kunpeng920-4826-2p\n    cost: {file: costs.yaml}\n    nics:\n      - {name: eth0, model: hi1822-25g, numa_node: 0, ip: 10.0.0.2/24}", 1)
	Expect(strings.Count(text, "cost: {file: costs.yaml")).To(Equal(2))
	text += `
reproduction:
  - {figure: "driver receive time (ns)", kind: predicted, published: 14.255, savanna: default.server.cpu.all.ops.nic_rx_packet.ns, sensitivity: [nic_rx_packet, nic_tx_packet], note: "moves with the price"}
  - {figure: "offered rate (req/s)", kind: declared, published: 132402.98, savanna: default.pktgen.tx_pps, note: "set"}
  - {figure: "a ratio", kind: derived, published: 0.10, savanna: default.pktgen.tx_pps / default.pktgen.tx_pps, note: "rows 1 and 2"}
`
	path := filepath.Join(dir, "repro.yaml")
	Expect(os.WriteFile(path, []byte(text), 0o644)).To(Succeed())
	return path, []byte(costs)
}

// bandRE reads the first row's value and band cells.
var bandRE = regexp.MustCompile("\\| `quickstart` \\| predicted \\| driver receive time \\(ns\\) \\| 14\\.255 \\| ([^|]+) \\| [^|]+ \\| ([^|]+) – ([^|(]+?)(?: \\(u = 0: ([^)]*)\\))? \\| (yes|no) \\|")

// figure reads a figure as the reports print it (thin spaces between
// groups of digits).
func figure(s string) float64 {
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), "\u202f", ""), 64)
	Expect(err).NotTo(HaveOccurred(), s)
	return v
}

var _ = Describe("simrun reproduce", func() {
	It("prints each row's kind and the published figure exactly as written", func() {
		path, _ := reproFixture("")
		code, out, errOut := simrun("reproduce", path)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("| scenario | kind | figure | published | Savanna | ratio | note |"))
		Expect(out).To(MatchRegexp("\\| `quickstart` \\| predicted \\| driver receive time \\(ns\\) \\| 14\\.255 \\| "))
		Expect(out).NotTo(ContainSubstring("| 14.26 |"), "the reports' number format would round it")
		Expect(out).To(ContainSubstring("| declared | offered rate (req/s) | 132402.98 | "))
		Expect(out).To(ContainSubstring("| derived | a ratio | 0.10 | 1 | 10 |"))
		Expect(out).To(ContainSubstring("Predicted rows within 25% of the published figure: 0 of 1."))
		Expect(out).NotTo(ContainSubstring("band"), "no band without --sensitivity")
	})

	It("names each host's cost model with its digest, and counts a host's overrides", func() {
		path, costs := reproFixture("0.1")
		code, out, _ := simrun("reproduce", path)
		Expect(code).To(Equal(0))
		sum := sha256.Sum256(costs)
		Expect(out).To(ContainSubstring("| `quickstart` | `savanna-default-2026.1` | `" + hex.EncodeToString(sum[:])[:12] + "` | client, server (with 1 override) |"))
	})

	It("prints the band of a predicted row over its ops' uncertainty, and it moves with the uncertainty", func() {
		bandOf := func(u string) (value, lo, hi float64, zero, in string) {
			path, _ := reproFixture(u)
			code, out, errOut := simrun("reproduce", "--sensitivity", path)
			Expect(code).To(Equal(0), errOut)
			Expect(out).To(ContainSubstring("| scenario | kind | figure | published | Savanna | ratio | band | in band | note |"))
			m := bandRE.FindStringSubmatch(out)
			Expect(m).NotTo(BeNil(), out)
			Expect(out).To(ContainSubstring("| declared | offered rate (req/s) | 132402.98 | 1\u202f000\u202f000 | 7.553 | - | - |"), "a declared row has no band")
			return figure(m[1]), figure(m[2]), figure(m[3]), m[4], m[5]
		}
		v, lo, hi, zero, in := bandOf("0.1")
		Expect(zero).To(Equal("nic_tx_packet"), "an op of uncertainty 0 is reported as such")
		Expect(in).To(Equal("no"))
		// The figure is the price times the packets: the band is the
		// price's own (to the four digits printed).
		Expect(lo).To(BeNumerically("~", 0.9*v, 0.001*v))
		Expect(hi).To(BeNumerically("~", 1.1*v, 0.001*v))
		v4, lo4, hi4, _, _ := bandOf("0.4")
		Expect(v4).To(Equal(v), "the uncertainty moves the band, never the figure")
		Expect(lo4).To(BeNumerically("~", 0.6*v, 0.001*v))
		Expect(hi4).To(BeNumerically("~", 1.4*v, 0.001*v))
		Expect(hi4 - lo4).To(BeNumerically(">", 3.9*(hi-lo)))
	})

	It("says so when no op of a row has an uncertainty", func() {
		path, _ := reproFixture("")
		code, out, _ := simrun("reproduce", "--sensitivity", path)
		Expect(code).To(Equal(0))
		Expect(out).To(MatchRegexp("\\| 14\\.255 \\| [^|]+ \\| [^|]+ \\| - \\(u = 0: nic_rx_packet, nic_tx_packet\\) \\| - \\|"))
	})

	It("reruns only the variants a row reads", func() {
		path, _ := reproFixture("0.25")
		data, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		text := strings.ReplaceAll(string(data), "default.", "a.")
		text = strings.Replace(text, "expect:\n", "variants:\n  a: {}\n  b: {hosts.client.apps.0.rate_pps: 500000}\nexpect:\n", 1)
		text = text[:strings.Index(text, "expect:\n")] + text[strings.Index(text, "\nreproduction:"):]
		Expect(os.WriteFile(path, []byte(text), 0o644)).To(Succeed())
		out := filepath.Join(GinkgoT().TempDir(), "r.md")
		code, _, errOut := simrun("reproduce", "--sensitivity", "--out", out, path)
		Expect(code).To(Equal(0), errOut)
		Expect(errOut).To(ContainSubstring("1 scenario(s), 2 sensitivity run(s)"), "nic_rx_packet down and up, in variant a only")
	})

	It("writes the same bytes twice, whatever -j", func() {
		path, _ := reproFixture("0.25")
		_, one, _ := simrun("reproduce", "--sensitivity", path)
		_, again, _ := simrun("reproduce", "--sensitivity", "-j", "3", path)
		Expect(again).To(Equal(one))
		Expect(one).To(ContainSubstring(" – "))
	})

	It("refuses bad flags and a scenario without rows", func() {
		code, _, errOut := simrun("reproduce", "-j", "0")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("-j 0"))
		code, _, errOut = simrun("reproduce", "quickstart")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("has no reproduction: section"))
		path := scenarioWith("expect:\n", "reproduction:\n  - {figure: x, kind: guess, published: 1, savanna: '1'}\nexpect:\n")
		code, _, errOut = simrun("reproduce", path)
		Expect(code).To(Equal(2))
		Expect(errOut).To(MatchRegexp(`edited\.yaml:\d+:\d+: key "reproduction\[0\]\.kind": kind "guess"`))
	})

	It("regenerates docs/reproduction.md byte for byte", Label("slow"), func() {
		doc, err := os.ReadFile("../../docs/reproduction.md")
		Expect(err).NotTo(HaveOccurred())
		args := []string{"reproduce"}
		if strings.Contains(string(doc), "simrun reproduce --sensitivity") {
			args = append(args, "--sensitivity", "-j", "2")
		}
		code, out, errOut := simrun(args...)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		Expect(out).To(Equal(string(doc)), "docs/reproduction.md is stale: run go run ./cmd/simrun reproduce --sensitivity --out docs/reproduction.md")
	})
})
