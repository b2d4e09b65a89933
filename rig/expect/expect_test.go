package expect_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/expect"
	"github.com/savanna-sim/savanna/rig/report"
)

func env() map[string]report.Tree {
	k, l := report.Tree{}, report.Tree{}
	k.Set("redis_benchmark.SET.rps", 132402)
	k.Set("redis_benchmark.p99_ms", 14.2)
	l.Set("redis_benchmark.SET.rps", 359389)
	l.Set("redis_benchmark.p99_ms", 3.1)
	l.Set("server.nic.eth0.imissed", 0)
	return map[string]report.Tree{"kernel": k, "lstack": l}
}

var _ = Describe("expectations", func() {
	It("hold and fail as their expressions say", func() {
		rs, err := expect.Evaluate([]string{
			"lstack.redis_benchmark.SET.rps > kernel.redis_benchmark.SET.rps * 1.5",
			"lstack.redis_benchmark.p99_ms < kernel.redis_benchmark.p99_ms * 0.1",
			"lstack.server.nic.eth0.imissed == 0 && kernel.redis_benchmark.p99_ms > 10",
		}, env())
		Expect(err).NotTo(HaveOccurred())
		Expect(rs[0].Held).To(BeTrue())
		Expect(rs[1].Held).To(BeFalse())
		Expect(rs[1].Detail).To(ContainSubstring("left lstack.redis_benchmark.p99_ms = 3.1, right kernel.redis_benchmark.p99_ms * 0.1 = 1.42"))
		Expect(rs[2].Held).To(BeTrue())
	})

	It("name every figure of a compound expression in the detail", func() {
		rs, err := expect.Evaluate([]string{"lstack.redis_benchmark.p99_ms > 5 || kernel.redis_benchmark.p99_ms < 1"}, env())
		Expect(err).NotTo(HaveOccurred())
		Expect(rs[0].Held).To(BeFalse())
		Expect(rs[0].Detail).To(Equal("lstack.redis_benchmark.p99_ms = 3.1; kernel.redis_benchmark.p99_ms = 14.2"))
	})

	DescribeTable("are errors, never failures, when they cannot be evaluated",
		func(src, want string) {
			_, err := expect.Evaluate([]string{"1 < 2", src}, env())
			Expect(err).To(MatchError(ContainSubstring(want)))
			Expect(err).To(MatchError(ContainSubstring("expect[1]")))
		},
		Entry("an unknown figure", "lstack.redis_benchmark.GET.rps > 1", "figure lstack.redis_benchmark.GET.rps does not exist; lstack.redis_benchmark has: SET, p99_ms"),
		Entry("an unknown variant", "dpdk.redis_benchmark.SET.rps > 1", `"dpdk" is not a variant (variants: kernel, lstack)`),
		Entry("a path through a number", "lstack.redis_benchmark.p99_ms.max > 1", "lstack.redis_benchmark.p99_ms is a number"),
		Entry("a syntax error", "lstack.redis_benchmark.p99_ms >", "syntax"),
		Entry("a non-boolean", "lstack.redis_benchmark.p99_ms + 1", "not a boolean expression"),
	)
})
