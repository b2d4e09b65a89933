package zlibshim_test

import (
	"bytes"
	"compress/gzip"
	"io"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw/hwtest"
	"github.com/savanna-sim/savanna/sim/qat"
	"github.com/savanna-sim/savanna/zlibshim"
)

var _ = Describe("a stream given whole at Finish", func() {
	// A Tengine worker hands the shim a whole page and Finish at once. A
	// page of an exact multiple of the request size used to end in an
	// empty final block written in software, so the device never saw the
	// stream end: it counted one stream for several responses.
	for _, pages := range []int{1, 2, 3} {
		It("sends its last request as the final one, and the device counts one stream per response", func() {
			q := newQATRig(qat.DeviceConfig{}, zlibshim.Config{})
			page := hwtest.Corpus(pages*zlibshim.DefaultRequestSize, uint64(pages))
			const responses = 4
			for range responses {
				d, err := q.p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: 6})
				Expect(err).NotTo(HaveOccurred())
				out := make([]byte, len(page)+4096)
				d.NextIn, d.NextOut = page, out
				Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStreamEnd))
				Expect(d.DeflateEnd()).To(Succeed())
				zr, err := gzip.NewReader(bytes.NewReader(out[:len(out)-len(d.NextOut)]))
				Expect(err).NotTo(HaveOccurred())
				got, err := io.ReadAll(zr)
				Expect(err).NotTo(HaveOccurred())
				Expect(got).To(Equal(page))
			}
			st := q.p.Stats()
			Expect(st.SWRequests).To(BeZero(), "no block written in software")
			Expect(st.HWRequests).To(Equal(uint64(responses * pages)))
			Expect(q.dev.DeviceStats().Streams).To(Equal(uint64(responses)))
		})
	}
})
