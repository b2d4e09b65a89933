package rig_test

import (
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/report"
)

// withWarmup gives a bundled scenario a 20 ms warm-up where it has none,
// so that every conservation identity is checked across a reset.
func withWarmup(name string) []string {
	return []string{"warmup: 0s", "warmup: 20ms"}
}

var _ = Describe("conservation across a warm-up", func() {
	// Every request the HTTP server gzipped went through the shim once,
	// and every byte and request the shim gave the hardware reached the
	// device: the identities hold exactly (compression is synchronous in
	// a request), however long the warm-up was, because every statistic
	// of every model is reset when it ends.
	for _, name := range []string{"tengine-gzip-qat", "qat-reload-exhaustion", "qat-hugepage-leak", "qat-legacy-alloc", "qat-thread-completion"} {
		It("holds in "+name, func() {
			data := bundledText(name)
			var edits []string
			if regexp.MustCompile(`(?m)^warmup: 0s`).MatchString(data) {
				edits = withWarmup(name)
			}
			r := runScenario(fromText(name+".yaml", data, edits...))
			for _, variant := range r.Variants {
				server := "http.server."
				shim := "http.shim."
				gzipped := fig(r, variant, server+"gzipped")
				Expect(gzipped).To(BeNumerically(">", 0), variant)
				// A stream the hardware-only policy failed is a 500, and its
				// page's bytes are not a response's.
				failed := fig(r, variant, server+"failed_5xx")
				Expect(fig(r, variant, shim+"deflate_streams")).To(Equal(gzipped+failed), variant+": streams")
				if failed == 0 {
					Expect(fig(r, variant, shim+"hw_bytes_in")+fig(r, variant, shim+"sw_bytes_in")).
						To(Equal(fig(r, variant, server+"body_bytes_before_gzip")), variant+": bytes")
				}
				var devRequests, devBytes float64
				if q, ok := r.Figures[variant]["web"].(report.Tree)["qat"].(report.Tree); ok {
					devs, _ := q["devices"].(report.Tree)
					for _, d := range devs {
						dt := d.(report.Tree)
						devRequests += dt["requests"].(report.Tree)["compress"].(float64)
						devBytes += dt["bytes_in"].(report.Tree)["compress"].(float64)
					}
				}
				Expect(devRequests).To(Equal(fig(r, variant, shim+"hw_requests")), variant+": device requests")
				Expect(devBytes).To(Equal(fig(r, variant, shim+"hw_bytes_in")), variant+": device bytes")
			}
		})
	}
})
