package rig_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/report"
)

// mustFig is a figure that must exist: a zero from a misspelt path would
// pass an expectation of zero.
func mustFig(r *report.Report, variant, path string) float64 {
	v, ok := r.Figures[variant].Lookup(strings.Split(path, "."))
	ExpectWithOffset(1, ok).To(BeTrue(), "no figure %s.%s", variant, path)
	f, ok := v.(float64)
	ExpectWithOffset(1, ok).To(BeTrue(), "%s.%s is not a number", variant, path)
	return f
}

var _ = Describe("tengine-gzip-qat's declared calibration (issue 22)", Ordered, func() {
	var software, qat func(string) float64
	BeforeAll(func() {
		r := runScenario(bundled("tengine-gzip-qat"))
		software = func(k string) float64 { return mustFig(r, "software", k) }
		qat = func(k string) float64 { return mustFig(r, "qat", k) }
	})

	It("has software gzip at the declared 17.5% of the server's CPU, within a point", func() {
		// Deflate and CRC-32 are the shim's whole layer in software.
		gzip := software("web.cpu.all.ops.deflate_byte_l6.ns") + software("web.cpu.all.ops.crc32_byte.ns")
		Expect(software("web.cpu.all.layers.http.zlibshim.ns")).To(BeNumerically("~", gzip, 1))
		Expect(100 * gzip / software("web.cpu.all.busy_ns")).To(BeNumerically("~", 17.5, 1))
		Expect(software("web.cpu.all.busy_pct")).To(BeNumerically("~", 48, 1), "the declared CPU")
	})

	It("sends no byte through software deflate with the shim on QAT", func() {
		Expect(qat("http.shim.sw_bytes_in")).To(BeZero())
		Expect(qat("web.cpu.all.ops.deflate_byte_l6.count")).To(BeZero())
		Expect(qat("http.shim.hw_requests")).To(Equal(software("http.server.gzipped")))
	})

	It("counts the bodies sent gzipped and as they are apart", func() {
		for _, f := range []func(string) float64{software, qat} {
			plain := f("http.server.requests") - f("http.server.gzipped")
			Expect(plain).To(BeNumerically(">", 0))
			Expect(f("http.server.body_bytes_plain")).To(Equal(512*plain), "/1 is 512 bytes, below gzip.min_length")
			Expect(f("http.server.body_bytes_before_gzip")).To(Equal(53248 * f("http.server.gzipped")))
			Expect(f("http.server.body_bytes_sent")).To(Equal(f("http.server.body_bytes_after_gzip") + f("http.server.body_bytes_plain")))
		}
	})

	It("reports a load below the busy CPUs (softirq is no thread's) and lower with QAT", func() {
		busy := software("web.cpu.all.busy_pct") / 100 * 32
		Expect(software("web.load.nr_running_avg")).To(BeNumerically("<", busy))
		Expect(software("web.load.nr_running_avg")).To(BeNumerically(">", 0.8*busy))
		Expect(qat("web.load.nr_running_avg")).To(BeNumerically("<", software("web.load.nr_running_avg")))
		Expect(software("web.load.threads")).To(Equal(32.0))
	})
})
