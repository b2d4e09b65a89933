package rig_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
)

// lossyRedis is gazelle-redis cut short: a clean run and one whose link
// loses frames, which has not finished SET when the run ends; its only
// expectation is expect.
func lossyRedis(expect string) *scenario.Scenario {
	data, err := os.ReadFile(filepath.Join("..", "scenarios", "gazelle-redis.yaml"))
	Expect(err).NotTo(HaveOccurred())
	text, _, found := strings.Cut(string(data), "\nvariants:\n")
	Expect(found).To(BeTrue())
	return fromText("lossy-redis.yaml", text+"\nvariants:\n  clean: {}\n  lossy: {links.0.loss: 0.05}\n\nexpect:\n  - "+expect+"\n",
		"duration: 2500ms", "duration: 30ms",
		"requests: 100000", "requests: 2000",
		"clients: 1000", "clients: 50",
		redisBenchThreads, redisBenchOneThread)
}

// inputLeaf is the figure at path (segments), or nil.
func inputLeaf(t report.Tree, path ...string) any {
	v, _ := t.Lookup(path)
	return v
}

var _ = Describe("an expectation over a phase that never finished", func() {
	It("fails naming the phase, where the comparison would hold by accident", func() {
		s := lossyRedis("lossy.redis_benchmark.SET.rps < clean.redis_benchmark.SET.rps")
		r := runScenario(s)
		Expect(inputLeaf(r.Figures["clean"], "redis_benchmark", "SET", "finished")).To(Equal(1.0))
		Expect(inputLeaf(r.Figures["lossy"], "redis_benchmark", "SET", "finished")).To(Equal(0.0))
		Expect(r.Expectations[0].Expr).To(Equal("lossy.redis_benchmark.SET.rps < clean.redis_benchmark.SET.rps"))
		Expect(r.Expectations[0].Held).To(BeFalse())
		Expect(r.Expectations[0].Detail).To(Equal("phase lossy.redis_benchmark.SET never finished (its figures count only what completed)"))
		Expect(r.Passed()).To(BeFalse())
	})
})

var _ = Describe("a run whose expectation cannot be evaluated", func() {
	It("keeps the report, the expectation failed with its error, and returns an error naming expect[i] at its line", func() {
		s := bundled("quickstart", "default.pktgen.lost < 40", "default.pktgen.lostt < 40")
		r, err := rig.Run(s, rig.Options{})
		var inv *rig.InvalidError
		Expect(errors.As(err, &inv)).To(BeTrue())
		Expect(err).To(MatchError(MatchRegexp(`^quickstart\.yaml:4\d:5: key "expect\[1\]": "default\.pktgen\.lostt < 40": figure default\.pktgen\.lostt does not exist; default\.pktgen has: .*; did you mean default\.pktgen\.lost\?$`)))
		Expect(r).NotTo(BeNil())
		Expect(r.Variants).To(Equal([]string{"default"}))
		Expect(inputLeaf(r.Figures["default"], "pktgen", "tx_packets")).To(BeNumerically(">", 1000))
		Expect(r.Expectations).To(HaveLen(4))
		Expect(r.Expectations[0].Held).To(BeTrue())
		Expect(r.Expectations[1].Held).To(BeFalse())
		Expect(r.Expectations[1].Detail).To(HavePrefix("cannot be evaluated: figure default.pktgen.lostt does not exist"))
	})
})

var _ = Describe("a stopped run", func() {
	twoVariants := []string{"capture: [server.eth0]\n", "capture: [server.eth0]\nvariants:\n  first: {}\n  second: {}\n",
		"default.", "first.", "default.", "first.", "default.", "first.", "default.", "first."}

	It("stops at the step after Stop answers, with the finished variants and the interrupted one's figures, marked incomplete", func() {
		s := bundled("quickstart", twoVariants...)
		var at rig.Progress
		asked := 0
		r, err := rig.Run(s, rig.Options{
			Progress: func(p rig.Progress) { at = p },
			Stop: func() string {
				asked++
				if at.Index == 1 {
					return "stopped by the spec"
				}
				return ""
			},
		})
		var inc *rig.IncompleteError
		Expect(errors.As(err, &inc)).To(BeTrue())
		// The second variant stops after its first warm-up step: 2ms/20.
		Expect(*inc).To(Equal(rig.IncompleteError{Reason: "stopped by the spec", Variant: "second",
			Sim: 100 * time.Microsecond, End: 22 * time.Millisecond, Done: 22*time.Millisecond + 100*time.Microsecond, Total: 44 * time.Millisecond}))
		Expect(err).To(MatchError("incomplete: stopped by the spec after 22.1ms of 44ms simulated (variant second at 100µs of 22ms); expectations not evaluated"))
		Expect(asked).To(Equal(120 + 1))
		Expect(r.Variants).To(Equal([]string{"first", "second"}))
		Expect(inputLeaf(r.Figures["first"], "pktgen", "tx_packets")).To(BeNumerically(">", 15000))
		Expect(inputLeaf(r.Figures["second"], "pktgen", "tx_packets")).To(BeNumerically("<", 200))
		// Stopped in its warm-up, nothing was reset: its figures count
		// the 100 µs that ran, and sim.seconds says so.
		Expect(inputLeaf(r.Figures["second"], "sim", "seconds")).To(Equal(0.0001))
		Expect(r.Incomplete).To(Equal(err.Error()))
		Expect(r.Expectations).To(BeEmpty())
		Expect(r.Passed()).To(BeFalse())
	})

	It("runs as if never asked when Stop always answers empty", func() {
		s := bundled("quickstart")
		a := runScenario(s)
		b, err := rig.Run(s, rig.Options{Stop: func() string { return "" }})
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Figures).To(Equal(a.Figures))
		Expect(b.Expectations).To(Equal(a.Expectations))
	})
})
