package expect_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/expect"
	"github.com/savanna-sim/savanna/rig/report"
)

// phases is a redis-benchmark whose lossy run never finished SET.
func phases() map[string]report.Tree {
	clean, lossy := report.Tree{}, report.Tree{}
	for _, t := range []report.Tree{clean, lossy} {
		t.Set("redis_benchmark.SET.rps", 100000)
		t.Set("redis_benchmark.SET.finished", 1)
		t.Set("redis_benchmark.GET.finished", 1)
		t.Set("redis_benchmark.GET.rps", 90000)
		t.Set("redis_benchmark.finished", 1)
		t.Set("redis_benchmark.errors", 0)
		t.Set("server.nic.eth0.imissed", 0)
	}
	lossy.Set("redis_benchmark.SET.rps", 2000)
	lossy.Set("redis_benchmark.SET.finished", 0)
	lossy.Set("redis_benchmark.GET.rps", 0)
	lossy.Set("redis_benchmark.GET.finished", 0)
	lossy.Set("redis_benchmark.finished", 0)
	return map[string]report.Tree{"clean": clean, "lossy": lossy}
}

var _ = Describe("figures of a phase that never finished", func() {
	It("fail the expectation, naming the phase, where the comparison would hold by accident", func() {
		rs, err := expect.Evaluate([]string{"lossy.redis_benchmark.SET.rps < clean.redis_benchmark.SET.rps"}, phases())
		Expect(err).NotTo(HaveOccurred())
		Expect(rs[0].Held).To(BeFalse())
		Expect(rs[0].Detail).To(Equal("phase lossy.redis_benchmark.SET never finished (its figures count only what completed)"))
	})

	It("name the deepest unfinished prefix of each figure, each phase once", func() {
		rs, err := expect.Evaluate([]string{
			"lossy.redis_benchmark.errors == 0 && lossy.redis_benchmark.GET.rps >= 0 && lossy.redis_benchmark.SET.rps >= 0 && lossy.redis_benchmark.GET.rps < 1e9",
		}, phases())
		Expect(err).NotTo(HaveOccurred())
		Expect(rs[0].Held).To(BeFalse())
		Expect(rs[0].Detail).To(Equal("phase lossy.redis_benchmark never finished; phase lossy.redis_benchmark.GET never finished; " +
			"phase lossy.redis_benchmark.SET never finished (its figures count only what completed)"))
	})

	It("leave finished figures themselves, finished phases and figures outside any phase alone", func() {
		rs, err := expect.Evaluate([]string{
			"lossy.redis_benchmark.finished == 0",
			"lossy.redis_benchmark.SET.finished == 0 && clean.redis_benchmark.SET.finished == 1",
			"clean.redis_benchmark.SET.rps > 0 && clean.redis_benchmark.errors == 0",
			"lossy.server.nic.eth0.imissed == 0",
		}, phases())
		Expect(err).NotTo(HaveOccurred())
		for _, r := range rs {
			Expect(r.Held).To(BeTrue(), r.Expr+": "+r.Detail)
		}
	})
})

var _ = Describe("an expectation that cannot be evaluated", func() {
	It("does not keep the others from their verdicts", func() {
		rs, err := expect.Evaluate([]string{"clean.redis_benchmark.SET.rps > 1", "clean.redis_benchmark.SET.rsp > 1", "clean.redis_benchmark.GET.rps > 1e6"}, phases())
		Expect(err).To(MatchError(ContainSubstring(`expect[1] "clean.redis_benchmark.SET.rsp > 1": figure clean.redis_benchmark.SET.rsp does not exist`)))
		Expect(rs).To(HaveLen(3))
		Expect(rs[0].Held).To(BeTrue())
		Expect(rs[1].Held).To(BeFalse())
		Expect(rs[1].Err).To(HaveOccurred())
		Expect(rs[1].Detail).To(HavePrefix("cannot be evaluated: figure clean.redis_benchmark.SET.rsp does not exist"))
		Expect(rs[2].Held).To(BeFalse())
		Expect(rs[2].Err).NotTo(HaveOccurred())
	})
})

var _ = Describe("checking an expectation without running", func() {
	DescribeTable("finds what evaluation would refuse, with a suggestion for a slip",
		func(src, want string) {
			Expect(expect.Check(src, phases())).To(MatchError(want))
		},
		Entry("a misspelt figure", "clean.redis_benchmark.SET.rsp > 1",
			"figure clean.redis_benchmark.SET.rsp does not exist; clean.redis_benchmark.SET has: finished, rps; did you mean clean.redis_benchmark.SET.rps?"),
		Entry("a misspelt variant", "claen.redis_benchmark.SET.rps > 1",
			`figure claen.redis_benchmark.SET.rps does not exist: "claen" is not a variant (variants: clean, lossy); did you mean clean.redis_benchmark.SET.rps?`),
		Entry("a misspelt inner name", "lossy.server.nic.eth1.imissed == 0",
			"figure lossy.server.nic.eth1.imissed does not exist; lossy.server.nic has: eth0; did you mean lossy.server.nic.eth0.imissed?"),
		Entry("a figure with nothing close", "clean.wrk.latency.p99_us < 10",
			"figure clean.wrk.latency.p99_us does not exist; clean has: redis_benchmark, server"),
		Entry("a non-boolean", "clean.redis_benchmark.SET.rps + 1",
			"not a boolean expression (it gives a number): an expectation must compare, such as clean.redis_benchmark.SET.rps + 1 > 0"),
	)

	It("finds syntax errors", func() {
		Expect(expect.Check("clean.redis_benchmark.SET.rps >", phases())).To(MatchError(HavePrefix("syntax: ")))
		Expect(expect.Check("clean.redis_benchmark.SET.rps > 1 &&& 2", phases())).To(MatchError(HavePrefix("syntax: ")))
	})

	It("accepts what names existing figures, whatever their values", func() {
		Expect(expect.Check("clean.redis_benchmark.SET.rps / lossy.redis_benchmark.GET.rps > 2", phases())).To(Succeed())
		Expect(expect.Check(`clean.server.nic["eth0"].imissed == 0`, phases())).To(Succeed())
		Expect(expect.CheckValue("clean.redis_benchmark.SET.rps / lossy.redis_benchmark.SET.rps", phases())).To(Succeed())
		Expect(expect.CheckValue("clean.redis_benchmark.SET.rps > 1", phases())).To(MatchError(ContainSubstring("not a number")))
	})
})
