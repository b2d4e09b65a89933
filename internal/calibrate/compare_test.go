package calibrate_test

import (
	"bytes"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/calibrate"
)

// twoFiles writes the synthetic calibration twice, edit changing the
// second result first.
func twoFiles(edit func(r *calibrate.Result)) ([]byte, []byte) {
	_, a := written(synthetic())
	r := synthetic()
	edit(r)
	_, b := written(r)
	return a, b
}

func diffOf(diffs []calibrate.Diff, op string) calibrate.Diff {
	for _, d := range diffs {
		if d.Op == op {
			return d
		}
	}
	Fail("no diff for " + op)
	return calibrate.Diff{}
}

var _ = Describe("comparing two calibrations", func() {
	It("gives each price's two values and their difference, flagging an unmarked one beyond 5% and passing a marked one", func() {
		a, b := twoFiles(func(r *calibrate.Result) {
			r.Get("getppid").Summary.Median = 110 // +10%, steady: unexplained
			*r.Get("crc32") = *meas("crc32", 0.036, 0.2)
			r.Get("memcpy_1500").Summary.Median = 0.051 // +2%
		})
		diffs, err := calibrate.Compare("a.yaml", a, "b.yaml", b)
		Expect(err).NotTo(HaveOccurred())
		sys := diffOf(diffs, "syscall")
		Expect(sys.A.Value).To(Equal(100.0))
		Expect(sys.B.Value).To(Equal(110.0))
		Expect(sys.Rel).To(BeNumerically("~", 0.10, 1e-12))
		Expect(sys.Measured).To(BeTrue())
		Expect(sys.Unexplained(0.05)).To(BeTrue())
		crc := diffOf(diffs, "crc32_byte")
		Expect(crc.NoisyB).To(BeTrue())
		Expect(crc.SpreadB).To(BeNumerically("~", 0.2, 1e-9))
		Expect(crc.Beyond(0.05)).To(BeTrue())
		Expect(crc.Unexplained(0.05)).To(BeFalse())
		Expect(diffOf(diffs, "copy_byte").Beyond(0.05)).To(BeFalse())
		// Kept at the default in both: not measured, no difference.
		irq := diffOf(diffs, "interrupt")
		Expect(irq.Measured).To(BeFalse())
		Expect(irq.Rel).To(BeZero())

		var out bytes.Buffer
		sum, err := calibrate.WriteCompare(&out, "a.yaml", "b.yaml", diffs, 0.05, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(out.String()).To(MatchRegexp(`\nsyscall\s+100\s+110\s+ns\s+\+10\.0%\s+BEYOND 5%\n`))
		Expect(out.String()).To(MatchRegexp(`\ncrc32_byte\s+0\.03\s+0\.036\s+ns\s+\+20\.0%\s+beyond 5%, marked noisy \(B noisy 20\.0%\)\n`))
		Expect(out.String()).To(MatchRegexp(`\ncopy_byte\s+0\.05\s+0\.051\s+ns\s+\+2\.0%\s*\n`))
		Expect(out.String()).NotTo(ContainSubstring("\ninterrupt "))
		// syscall, and two differences from getppid: syscall_futex
		// (180 - 110 against 80, -12.5%) and epoll_wait_kernel (250 - 110
		// against 150, -6.7%); context_switch (600 - 110) moves 2%.
		Expect(sum.Unexplained).To(Equal(3))
		Expect(out.String()).To(MatchRegexp(`\nsyscall_futex\s+80\s+70\s+ns\s+-12\.5%\s+BEYOND 5%\n`))
		Expect(sum.Noisy).To(Equal(1))
		Expect(sum.Measured).To(Equal(sum.Within + sum.Noisy + sum.Unexplained))
		Expect(out.String()).To(ContainSubstring("beyond it unmarked"))

		out.Reset()
		_, err = calibrate.WriteCompare(&out, "a.yaml", "b.yaml", diffs, 0.05, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(out.String()).To(MatchRegexp(`\ninterrupt\s+1500\s+1500\s+ns\s+\+0\.0%\s+default in both\n`))
	})

	It("finds two equal calibrations within the limit", func() {
		a, b := twoFiles(func(*calibrate.Result) {})
		diffs, err := calibrate.Compare("a.yaml", a, "b.yaml", b)
		Expect(err).NotTo(HaveOccurred())
		var out bytes.Buffer
		sum, err := calibrate.WriteCompare(&out, "a.yaml", "b.yaml", diffs, 0.05, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(sum.Measured).To(BeNumerically(">", 20))
		Expect(sum.Within).To(Equal(sum.Measured))
	})

	It("names an op one file lacks, and refuses what is not a cost file", func() {
		a, _ := twoFiles(func(*calibrate.Result) {})
		b := bytes.Replace(a, []byte("\n  wakeup_same_core: {"), []byte("\n  wakeup_elsewhere: {"), 1)
		Expect(b).NotTo(Equal(a))
		diffs, err := calibrate.Compare("a.yaml", a, "old.yaml", b)
		Expect(err).NotTo(HaveOccurred())
		var out bytes.Buffer
		sum, err := calibrate.WriteCompare(&out, "a.yaml", "old.yaml", diffs, 0.05, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(sum.Missing).To(Equal(2))
		Expect(out.String()).To(MatchRegexp(`\nwakeup_same_core\s+\S+\s+-\s+not in B\n`))

		_, err = calibrate.Compare("a.yaml", a, "bad.yaml", []byte("version: 1\ncosts: [1, 2\n"))
		Expect(err).To(MatchError(ContainSubstring("bad.yaml")))
		_, err = calibrate.Compare("a.yaml", a, "v2.yaml", []byte("version: 2\ncosts: {syscall: {value: 1, unit: ns, source: x}}\n"))
		Expect(err).To(MatchError(ContainSubstring("v2.yaml: version 2")))
	})
})
