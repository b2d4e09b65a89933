package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// quickSweep is the specs' sweep: 2 variants × 3 rates × 2 seeds of a
// shortened quickstart.
const quickSweep = "testdata/sweep/quick-sweep.yaml"

// shardRuns runs the sweep as n shards into folders of one temp folder
// and returns the folders.
func shardRuns(file string, n int, extra ...string) []string {
	root := GinkgoT().TempDir()
	var dirs []string
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("shard%d", i))
		args := append([]string{"run", file, "--shard", fmt.Sprintf("%d/%d", i, n), "--out", dir}, extra...)
		code, out, errOut := simrun(args...)
		Expect(errOut).To(BeEmpty())
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring(fmt.Sprintf("shard %d/%d (from --shard)", i, n)))
		dirs = append(dirs, dir)
	}
	return dirs
}

func pointFiles(dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "point-*.json"))
	Expect(err).NotTo(HaveOccurred())
	return files
}

var _ = Describe("simrun run of a sweep", func() {
	It("gives the same bytes run whole, with -j 2, and as 1, 2 or 3 shards merged (json and text)", func() {
		for _, format := range []string{"json", "table"} {
			code, whole, errOut := simrun("run", quickSweep, "--format", format)
			Expect(errOut).To(BeEmpty())
			Expect(code).To(Equal(0))
			code, parallel, _ := simrun("run", quickSweep, "--format", format, "-j", "2")
			Expect(code).To(Equal(0))
			Expect(parallel).To(Equal(whole), "-j 2")
			for _, n := range []int{1, 2, 3} {
				args := append([]string{"merge", "--format", format}, shardRuns(quickSweep, n)...)
				code, merged, errOut := simrun(args...)
				Expect(errOut).To(BeEmpty())
				Expect(code).To(Equal(0))
				Expect(merged).To(Equal(whole), "%d shards, %s", n, format)
			}
			if format == "json" {
				Expect(whole).To(ContainSubstring(`"grid_points": [`))
				Expect(whole).To(ContainSubstring(`"base.pktgen.tx_pps": [`))
			} else {
				Expect(whole).To(ContainSubstring("knee at hosts.client.apps[0].rate_pps = 1000000: failed at the values before it, held there"))
				Expect(whole).To(MatchRegexp(`base.pktgen.tx_pps >= 999000 +0/2 +2/2 +2/2`))
			}
		}
	})

	It("shares the points out as k mod N, each shard writing one file per point", func() {
		dirs := shardRuns(quickSweep, 3)
		for i, d := range dirs {
			var names []string
			for _, f := range pointFiles(d) {
				names = append(names, filepath.Base(f))
			}
			var want []string
			for k := i; k < 12; k += 3 {
				want = append(want, fmt.Sprintf("point-%05d.json", k))
			}
			Expect(names).To(Equal(want))
		}
	})

	It("writes the report, a plot per headline figure and every point with --out", func() {
		dir := GinkgoT().TempDir()
		code, _, _ := simrun("run", quickSweep, "--out", dir, "-j", "2")
		Expect(code).To(Equal(0))
		Expect(pointFiles(dir)).To(HaveLen(12))
		html, err := os.ReadFile(filepath.Join(dir, "sweep.html"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(html)).To(ContainSubstring("<svg"))
		Expect(string(html)).To(ContainSubstring("Knees"))
		svgs, _ := filepath.Glob(filepath.Join(dir, "sweep-*.svg"))
		Expect(svgs).To(ContainElement(filepath.Join(dir, "sweep-pktgen.tx_pps.svg")))
		// The folder of a whole run merges too, to the same report.
		code, merged, _ := simrun("merge", dir, "--format", "json")
		Expect(code).To(Equal(0))
		want, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(merged).To(Equal(string(want)))
	})

	It("refuses a shard without --out, and -j or --shard on a file without a sweep", func() {
		code, _, errOut := simrun("run", quickSweep, "--shard", "1/3")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("give --out DIR"))
		code, _, errOut = simrun("run", "quickstart", "-j", "2")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("has no sweep: section"))
		code, _, errOut = simrun("run", quickSweep, "--shard", "3/3", "--out", GinkgoT().TempDir())
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("the last is 2/3"))
	})

	It("stops at --max-wall with exit 1 and no report, keeping the points that finished", func() {
		dir := GinkgoT().TempDir()
		code, out, errOut := simrun("run", quickSweep, "--max-wall", "1ns", "--out", dir)
		Expect(code).To(Equal(1))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(ContainSubstring("sweep incomplete: stopped by --max-wall 1ns after 0 of 12 points"))
		Expect(filepath.Join(dir, "sweep.json")).NotTo(BeAnExistingFile())
	})

	It("runs the variants once with --sweep=false", func() {
		code, out, _ := simrun("run", quickSweep, "--sweep=false", "--format", "json")
		Expect(code).To(BeNumerically("<=", 1))
		Expect(out).To(ContainSubstring(`"variants": [`))
		Expect(out).NotTo(ContainSubstring(`"grid_points"`))
	})
})

var _ = Describe("simrun merge", func() {
	var dirs []string
	BeforeEach(func() { dirs = shardRuns(quickSweep, 3) })

	It("refuses a missing point, naming it and its shard", func() {
		Expect(os.Remove(filepath.Join(dirs[1], "point-00004.json"))).To(Succeed())
		code, out, errOut := simrun(append([]string{"merge"}, dirs...)...)
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(ContainSubstring("1 of the sweep's 12 points are missing: 4"))
		Expect(errOut).To(ContainSubstring("shard(s) 1/3"))
		code, _, errOut = simrun("merge", dirs[0], dirs[2])
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("missing: 1, 4, 7, 10"))
	})

	It("refuses a point given twice", func() {
		code, _, errOut := simrun(append([]string{"merge"}, append(dirs, dirs[2])...)...)
		Expect(code).To(Equal(2))
		Expect(errOut).To(MatchRegexp(`point 2 is given twice: in .*shard2/point-00002.json and in .*shard2/point-00002.json`))
	})

	It("refuses shards of another scenario file, other seeds or another simrun", func() {
		data, err := os.ReadFile(quickSweep)
		Expect(err).NotTo(HaveOccurred())
		edited := filepath.Join(GinkgoT().TempDir(), "quick-sweep.yaml")
		Expect(os.WriteFile(edited, []byte(strings.Replace(string(data), "jitter: 8us", "jitter: 9us", 1)), 0o644)).To(Succeed())
		other := shardRuns(edited, 3)
		code, _, errOut := simrun("merge", dirs[0], dirs[1], other[2])
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("points of different scenario files"))

		seeded := shardRuns(quickSweep, 3, "--seed", "7")
		code, _, errOut = simrun("merge", dirs[0], dirs[1], seeded[2])
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("points of different seeds"))

		f := filepath.Join(dirs[2], "point-00002.json")
		p, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(f, []byte(strings.Replace(string(p), `"savanna_version": "`, `"savanna_version": "9.9-`, 1)), 0o644)).To(Succeed())
		code, _, errOut = simrun(append([]string{"merge"}, dirs...)...)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("points of different simrun versions"))
	})

	It("names a file that is not a point", func() {
		Expect(os.WriteFile(filepath.Join(dirs[0], "point-99999.json"), []byte(`{"format": "x"}`), 0o644)).To(Succeed())
		code, _, errOut := simrun(append([]string{"merge"}, dirs...)...)
		Expect(code).To(Equal(2))
		Expect(errOut).To(MatchRegexp(`point-99999.json: format "x", expected "savanna-sweep-point/1"`))
	})
})

var _ = Describe("the shard index from the environment", func() {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	DescribeTable("reads the batch systems' variables",
		func(flagValue string, count int, getenv func(string) string, want string, from string) {
			s, err := resolveShard(flagValue, count, getenv)
			Expect(err).NotTo(HaveOccurred())
			Expect(s.String()).To(Equal(want))
			Expect(s.From).To(ContainSubstring(from))
		},
		Entry("nothing set: the whole sweep", "", 0, env(), "0/1", "no shard"),
		Entry("auto, nothing set", "auto", 0, env(), "0/1", "no shard"),
		Entry("the flag wins over the environment", "1/4", 0, env("SIMRUN_SHARD", "2/3"), "1/4", "--shard"),
		Entry("a CI matrix", "", 0, env("SIMRUN_SHARD", "2/3"), "2/3", "SIMRUN_SHARD"),
		Entry("a Kubernetes Indexed Job with --shard-count", "auto", 5, env("JOB_COMPLETION_INDEX", "4"), "4/5", "--shard-count"),
		Entry("a Kubernetes Indexed Job with SHARD_COUNT", "", 0, env("JOB_COMPLETION_INDEX", "0", "SHARD_COUNT", "3"), "0/3", "SHARD_COUNT"),
		Entry("a Slurm array 0-3", "", 0, env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0"), "3/4", "SLURM"),
		Entry("a Slurm array 1-8", "", 0, env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_MAX", "8"), "0/8", "SLURM"),
		Entry("a Slurm array 0-14:2", "", 0, env("SLURM_ARRAY_TASK_ID", "6", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_MAX", "14", "SLURM_ARRAY_TASK_STEP", "2"), "3/8", "SLURM"),
	)
	DescribeTable("refuses what does not name a shard, naming the variable",
		func(flagValue string, getenv func(string) string, msg string) {
			_, err := resolveShard(flagValue, 0, getenv)
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("no slash", "3", env(), "expected I/N"),
		Entry("index past the count", "3/3", env(), "the last is 2/3"),
		Entry("zero shards", "0/0", env(), "0 shards"),
		Entry("a negative index", "-1/3", env(), "not a non-negative integer"),
		Entry("an Indexed Job without a count", "", env("JOB_COMPLETION_INDEX", "2"), "give --shard-count N or SHARD_COUNT=N"),
		Entry("an Indexed Job index past the count", "", env("JOB_COMPLETION_INDEX", "3", "SHARD_COUNT", "3"), "the last is 2/3"),
		Entry("a bad SIMRUN_SHARD", "", env("SIMRUN_SHARD", "x/3"), `SIMRUN_SHARD="x/3"`),
		Entry("a Slurm task without a count", "", env("SLURM_ARRAY_TASK_ID", "2"), "neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX"),
		Entry("a Slurm task off the step", "", env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_MAX", "14", "SLURM_ARRAY_TASK_STEP", "2"), "is not in the array"),
	)
})
