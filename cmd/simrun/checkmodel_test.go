package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/checkmodel"
)

var _ = Describe("simrun check-model", func() {
	DescribeTable("refuses bad flags before it touches the network",
		func(want string, args ...string) {
			code, _, errOut := simrun(append([]string{"check-model"}, args...)...)
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring(want))
		},
		Entry("no clients", `"0" is not a number of clients`, "--clients", "0"),
		Entry("not a number", `"ten" is not a number of clients`, "--clients", "1,ten"),
		Entry("a cost file that is not there", "--cost", "--cost", "/nonexistent/cost.yaml"),
		Entry("a positional argument", "usage: simrun check-model", "extra"),
		Entry("no requests", "--requests: 0", "--requests", "0", "--clients", "1"),
		Entry("an unknown workload", `--workloads: "memcached" is not one of redis, savanna, nginx`, "--workloads", "nginx,memcached", "--clients", "1"),
		Entry("a wrk duration that is not whole seconds", "--duration: 1.5s", "--workloads", "nginx", "--duration", "1500ms", "--clients", "1"),
	)

	DescribeTable("runs the workloads in their order, each once, --savanna adding savanna",
		func(list string, savanna bool, want ...string) {
			Expect(parseWorkloads(list, savanna)).To(Equal(want))
		},
		Entry("the default", "redis", false, "redis"),
		Entry("--savanna", "redis", true, "redis", "savanna"),
		Entry("nginx alone", "nginx", false, "nginx"),
		Entry("out of order, twice, with spaces", "nginx, redis,nginx", true, "redis", "savanna", "nginx"),
		Entry("an unknown name kept for the run to refuse", "nginx,memcached", false, "nginx", "memcached"),
	)

	It("runs real redis-server against its simulated twin in namespaces it makes (--quick)", Label("live", "slow"), func() {
		if err := checkmodel.CheckHost(); err != nil {
			Skip(err.Error())
		}
		for _, p := range []string{"redis-server", "redis-benchmark", "taskset"} {
			if _, err := exec.LookPath(p); err != nil {
				Skip(p + " not installed (Debian: redis-server, redis-tools, util-linux)")
			}
		}
		out := filepath.Join(GinkgoT().TempDir(), "validation.md")
		code, stdout, errOut := simrun("check-model", "--quick", "--quiet", "--out", out)
		// 1 is a figure outside its band: reported, not a failure here.
		Expect(code).To(BeElementOf(0, 1), errOut)
		AddReportEntry("check-model --quick", stdout)
		md, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		rows := tableRows(string(md), "redis")
		for _, cmd := range []string{"SET", "GET"} {
			expectFigures(rows, cmd, md)
		}
		Expect(rows).To(HaveLen(2 * 2 * len(checkmodel.Figures())))
		// Nothing it made is left behind.
		ns, err := exec.Command("ip", "netns", "list").Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(ns)).NotTo(ContainSubstring("scm"))
	})

	It("runs real nginx against wrk, the held-out workload, beside its simulated twin (--quick --workloads nginx)", Label("live", "slow"), func() {
		if err := checkmodel.CheckHost(); err != nil {
			Skip(err.Error())
		}
		for _, p := range []string{"nginx", "wrk", "taskset", "prlimit"} {
			if _, err := exec.LookPath(p); err != nil {
				Skip(p + " not installed (Debian: nginx, wrk, util-linux)")
			}
		}
		out := filepath.Join(GinkgoT().TempDir(), "validation.md")
		code, stdout, errOut := simrun("check-model", "--quick", "--quiet", "--workloads", "nginx", "--out", out)
		// 1 is a figure outside its band: reported, not a failure here.
		Expect(code).To(BeElementOf(0, 1), errOut)
		AddReportEntry("check-model --quick --workloads nginx", stdout)
		md, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(md)).To(ContainSubstring("nginx version: nginx/"))
		Expect(string(md)).NotTo(ContainSubstring("| redis |"))
		rows := tableRows(string(md), "nginx")
		expectFigures(rows, "GET", md)
		Expect(rows).To(HaveLen(2 * len(checkmodel.Figures())))
		// wrk saw no error: nginx kept every connection alive.
		Expect(string(md)).NotTo(ContainSubstring("wrk counted"))
		// Nothing it made is left behind: no namespace, no nginx of its
		// own (the master's pid file was in its folder, gone with it).
		ns, err := exec.Command("ip", "netns", "list").Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(ns)).NotTo(ContainSubstring("scm"))
	})
})

// expectFigures checks that the --quick points (1 and 10 clients) of
// cmd have every figure, real and simulated, as a positive finite number.
func expectFigures(rows map[string][]string, cmd string, md []byte) {
	GinkgoHelper()
	for _, n := range []string{"1", "10"} {
		for _, f := range checkmodel.Figures() {
			key := cmd + " " + n + " " + string(f)
			cells, ok := rows[key]
			Expect(ok).To(BeTrue(), "no row %s in:\n%s", key, md)
			for _, v := range cells[4:6] {
				x, err := strconv.ParseFloat(v, 64)
				Expect(err).NotTo(HaveOccurred(), "%s: %q", key, v)
				Expect(x > 0 && !math.IsInf(x, 0)).To(BeTrue(), "%s: %v", key, x)
			}
		}
	}
}

// tableRows reads check-model's Markdown table: the rows of one server,
// by "COMMAND CLIENTS FIGURE", each as its trimmed cells.
func tableRows(md, server string) map[string][]string {
	rows := map[string][]string{}
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "| "+server+" |") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows[cells[1]+" "+cells[2]+" "+cells[3]] = cells
	}
	return rows
}
