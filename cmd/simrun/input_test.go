package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig"
)

// edited writes a bundled scenario with each old→new edit applied.
func edited(name string, edits ...string) string {
	data, err := os.ReadFile("../../scenarios/" + name + ".yaml")
	Expect(err).NotTo(HaveOccurred())
	text := string(data)
	for i := 0; i < len(edits); i += 2 {
		Expect(text).To(ContainSubstring(edits[i]))
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	path := filepath.Join(GinkgoT().TempDir(), "edited.yaml")
	Expect(os.WriteFile(path, []byte(text), 0o644)).To(Succeed())
	return path
}

// qatReset is testdata/qat-reset.yaml with one edit.
func qatReset(old, new string) string {
	data, err := os.ReadFile("testdata/qat-reset.yaml")
	Expect(err).NotTo(HaveOccurred())
	Expect(string(data)).To(ContainSubstring(old))
	path := filepath.Join(GinkgoT().TempDir(), "edited.yaml")
	Expect(os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644)).To(Succeed())
	return path
}

var _ = Describe("bad input", func() {
	It("never panics on an event at a negative time: validate and run exit 2 naming events[i].at", func() {
		path := edited("quickstart", "capture: [server.eth0]\n", "capture: [server.eth0]\nevents:\n  - {at: -1ms, link_down: server.eth0}\n")
		for _, cmd := range []string{"validate", "run"} {
			code, _, errOut := simrun(cmd, path)
			Expect(code).To(Equal(2), cmd)
			Expect(errOut).To(Equal("simrun: " + path + `:39:6: key "events[0].at": -1ms is before the start of the run; an event's at is 0 or later` + "\n"))
		}
	})

	DescribeTable("is refused by validate with file:line:column and key",
		func(path func() string, want string) {
			p := path()
			code, out, errOut := simrun("validate", p)
			Expect(out).To(BeEmpty())
			Expect(code).To(Equal(2))
			Expect(errOut).To(HavePrefix("simrun: " + p + ":"))
			Expect(errOut).To(ContainSubstring(want))
		},
		Entry("a negative warm-up", func() string { return edited("quickstart", "warmup: 2ms", "warmup: -3ms") },
			`:10:1: key "warmup": -3ms is negative`),
		Entry("an explicit duration of 0", func() string { return edited("quickstart", "duration: 20ms", "duration: 0s") },
			`:9:1: key "duration": a measured phase of 0s measures nothing`),
		Entry("a qat_fault rate above 1", func() string { return qatReset("kind: reset, for: 100us", "kind: engine_error, rate: 1.5") },
			`:10:71: key "events[0].qat_fault.rate": 1.5 is not a share between 0 and 1`),
		Entry("an engine_error without a rate", func() string { return qatReset("kind: reset, for: 100us", "kind: engine_error") },
			`key "events[0].qat_fault.rate": engine_error needs a rate`),
		Entry("an event after the end", func() string { return qatReset("at: 500us", "at: 5ms") },
			`:10:6: key "events[0].at": 5ms is after the end of the run (1ms: warmup 0s + duration 1ms)`),
		Entry("a target no host owns", func() string { return edited("gazelle-redis", "target: 10.0.0.1:6379", "target: 10.0.0.9:6379") },
			`key "hosts.client.apps[0].target": no NIC has the address 10.0.0.9`),
		Entry("the same address on two hosts", func() string { return edited("quickstart", "ip: 10.0.0.2/24", "ip: 10.0.0.1/24") },
			`key "hosts.server.nics[0].ip": address 10.0.0.1 is also on client.eth0`),
	)
})

var _ = Describe("simrun validate and expectations", func() {
	It("finds a figure that does not exist, naming expect[i] at its line, with a suggestion", func() {
		path := edited("quickstart", "default.pktgen.lost < 40", "default.pktgen.lostt < 40")
		code, _, errOut := simrun("validate", path)
		Expect(code).To(Equal(2))
		Expect(errOut).To(MatchRegexp(`^simrun: .*edited\.yaml:41:5: key "expect\[1\]": "default\.pktgen\.lostt < 40": figure default\.pktgen\.lostt does not exist; default\.pktgen has: .*; did you mean default\.pktgen\.lost\?\n$`))
	})

	It("names every bad expectation, one a line, and checks syntax", func() {
		path := edited("quickstart", "default.pktgen.lost < 40", "default.pktgen.lost <", "default.server.nic.eth0.imissed", "default.server.nic.eth1.imissed")
		code, _, errOut := simrun("validate", path)
		Expect(code).To(Equal(2))
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		Expect(lines).To(HaveLen(2))
		Expect(lines[0]).To(MatchRegexp(`^simrun: .*:41:5: key "expect\[1\]": "default\.pktgen\.lost <": syntax: unexpected token EOF \(1:21\)$`))
		Expect(lines[1]).To(MatchRegexp(`^simrun: .*:43:5: key "expect\[3\]": .*figure default\.server\.nic\.eth1\.imissed does not exist; default\.server\.nic has: eth0; did you mean default\.server\.nic\.eth0\.imissed\?$`))
	})

	It("refuses an expectation that is not a comparison", func() {
		code, _, errOut := simrun("validate", edited("quickstart", "default.pktgen.lost < 40", "default.pktgen.lost + 40"))
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`key "expect[1]": "default.pktgen.lost + 40": not a boolean expression`))
	})

	It("checks a variant's figures against that variant", func() {
		code, _, errOut := simrun("validate", edited("gazelle-redis", "lstack.server.nic.eth0.imissed == 0", "kernal.server.nic.eth0.imissed == 0"))
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`figure kernal.server.nic.eth0.imissed does not exist: "kernal" is not a variant (variants: kernel, lstack); did you mean kernel.server.nic.eth0.imissed?`))
	})
})

var _ = Describe("simrun run with an expectation it cannot evaluate", func() {
	It("still prints the report and writes --out, then exits 2", func() {
		dir := GinkgoT().TempDir()
		path := edited("quickstart", "default.pktgen.lost < 40", "default.pktgen.lostt < 40")
		code, out, errOut := simrun("run", path, "--out", dir)
		Expect(code).To(Equal(2))
		Expect(out).To(ContainSubstring("pktgen.rtt.p99_us"))
		Expect(out).To(ContainSubstring("PASS  default.pktgen.tx_pps >= 999000"))
		Expect(out).To(ContainSubstring("FAIL  default.pktgen.lostt < 40\n      cannot be evaluated: figure default.pktgen.lostt does not exist"))
		Expect(errOut).To(ContainSubstring(`edited.yaml:41:5: key "expect[1]": "default.pktgen.lostt < 40": figure default.pktgen.lostt does not exist`))
		for _, f := range []string{"report.json", "report.md", "report.html", "timing.json"} {
			Expect(filepath.Join(dir, f)).To(BeAnExistingFile())
		}
	})
})

var _ = Describe("a stopped run", func() {
	It("stops at --max-wall with a partial report marked incomplete, and exits 1", func() {
		dir := GinkgoT().TempDir()
		code, out, errOut := simrun("run", "quickstart", "--max-wall", "1ns", "--format", "json", "--out", dir)
		Expect(code).To(Equal(1))
		Expect(errOut).To(Equal("simrun: incomplete: stopped by --max-wall 1ns after 100µs of 22ms simulated (variant default at 100µs of 22ms); expectations not evaluated\n"))
		var r struct {
			Variants     []string                  `json:"variants"`
			Figures      map[string]map[string]any `json:"figures"`
			Expectations []struct {
				Expr   string `json:"expr"`
				Held   bool   `json:"held"`
				Detail string `json:"detail"`
			} `json:"expectations"`
			Incomplete string `json:"incomplete"`
		}
		Expect(json.Unmarshal([]byte(out), &r)).To(Succeed())
		Expect(r.Variants).To(Equal([]string{"default"}))
		Expect(r.Figures["default"]).To(HaveKey("pktgen"))
		Expect(r.Expectations).To(BeEmpty())
		Expect(r.Incomplete).To(HavePrefix("incomplete: stopped by --max-wall 1ns"))
		data, err := os.ReadFile(filepath.Join(dir, "report.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).To(Equal(out))
	})

	It("stops on SIGINT and on SIGTERM the same way", func() {
		for sig, name := range map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"} {
			released := 0
			notify := func() (<-chan os.Signal, func()) {
				ch := make(chan os.Signal, 1)
				ch <- sig
				return ch, func() { released++ }
			}
			var out, errOut bytes.Buffer
			code := cmdRunWith([]string{"quickstart"}, &out, &errOut, notify)
			Expect(code).To(Equal(1))
			Expect(errOut.String()).To(HavePrefix("simrun: incomplete: stopped by " + name + " after 100µs of 22ms simulated"))
			Expect(out.String()).To(ContainSubstring("INCOMPLETE (incomplete: stopped by " + name))
			Expect(released).To(BeNumerically(">=", 1), "the signal goes back to its default action, so that a second one ends simrun")
		}
	})

	It("refuses a negative --max-wall", func() {
		code, _, errOut := simrun("run", "quickstart", "--max-wall", "-1s")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--max-wall -1s is negative"))
	})
})

var _ = Describe("the run's wall-time estimate", func() {
	// clockAt is a run clock writing to a buffer, whose wall clock
	// advances by step at each reading.
	clockAt := func(total, step time.Duration, force bool) (*runClock, *bytes.Buffer) {
		var buf bytes.Buffer
		c := newRunClock(&buf, total, force)
		t := time.Unix(0, 0)
		c.now = func() time.Time { t = t.Add(step); return t }
		return c, &buf
	}
	steps := func(c *runClock, n int, each time.Duration) {
		p := rig.Progress{Variant: "default", Variants: 1, End: time.Duration(n) * each}
		c.progress(p)
		for i := 1; i <= n; i++ {
			p.Sim = time.Duration(i) * each
			c.progress(p)
		}
	}

	It("says once, at the first step, when the run will take more than an hour", func() {
		// The first step simulates 10ms in 5 wall seconds (one reading
		// of the clock after the start), so 100 s take 50,000 s.
		c, buf := clockAt(100*time.Second, 5*time.Second, true)
		steps(c, 3, 10*time.Millisecond)
		Expect(buf.String()).To(ContainSubstring("simrun: this run will take about 13h53m of wall time at the current rate (press Ctrl-C to stop with a partial report)\n"))
		Expect(strings.Count(buf.String(), "this run will take")).To(Equal(1))
	})

	It("says nothing of a run under an hour", func() {
		c, buf := clockAt(time.Second, time.Second, true)
		steps(c, 3, 10*time.Millisecond)
		Expect(buf.String()).NotTo(ContainSubstring("this run will take"))
	})

	It("is quiet off a terminal without --progress, as in CI", func() {
		c, buf := clockAt(100*time.Second, 5*time.Second, false)
		steps(c, 3, 10*time.Millisecond)
		Expect(buf.String()).To(BeEmpty())
	})

	It("draws the bar with --progress off a terminal", func() {
		_, _, errOut := simrun("run", "quickstart", "--progress")
		Expect(errOut).To(ContainSubstring("0% |"))
	})
})
