package zlibshim_test

import (
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/statstest"
	"github.com/savanna-sim/savanna/sim/qat"
	"github.com/savanna-sim/savanna/zlibshim"
)

var _ = Describe("ResetStats", func() {
	r := rand.New(rand.NewPCG(6, 6))
	data := textOf(r, 4*zlibshim.DefaultRequestSize, []string{"warm ", "up ", "measure ", "window ", "\n"})
	rs := zlibshim.DefaultRequestSize

	It("zeroes the counters, keeps the pinned bytes in use and restarts their peak from them", func() {
		q := newQATRig(qat.DeviceConfig{}, zlibshim.Config{})
		p := q.p
		buf := make([]byte, 1<<20)
		deflate := func(d *zlibshim.Deflater, in []byte) {
			d.NextIn, d.NextOut = in, buf
			Expect(d.Deflate(zlibshim.NoFlush)).To(Succeed())
		}
		// Warm-up: two streams on hardware, one ended (so the peak is
		// above what is in use), one left open holding its buffers, a
		// small request in software and a whole stream read back.
		open, err := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: 6})
		Expect(err).NotTo(HaveOccurred())
		deflate(open, data[:rs])
		comp := q.compressRequests(zlibshim.FormatGzip, data, func(int) {})
		small, _ := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatRaw, Level: 6})
		deflate(small, data[:100])
		small.NextOut = buf
		Expect(small.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStreamEnd))
		Expect(small.DeflateEnd()).To(Succeed())
		got, err := shimInflate(p, zlibshim.FormatGzip, comp)
		Expect(err).NotTo(HaveOccurred())
		same(got, data)

		before, status := p.Stats(), p.Status()
		Expect(before.HWRequests).To(BeNumerically(">=", 5))
		Expect(before.SmallRequests).To(BeNumerically(">=", 1))
		Expect(before.InflateStreams).To(BeEquivalentTo(1))
		Expect(before.PinnedBytesInUse).To(BeNumerically(">", 0))
		Expect(before.PinnedBytesPeak).To(BeNumerically(">", before.PinnedBytesInUse))
		Expect(status.OpenStreams).To(Equal(1))

		p.ResetStats()
		after := p.Stats()
		Expect(statstest.Problems(before, after, []string{"PinnedBytesInUse"}, []string{"PinnedBytesPeak"})).To(BeEmpty())
		Expect(after.PinnedBytesPeak).To(Equal(after.PinnedBytesInUse))
		now := p.Status()
		Expect(now.OpenStreams).To(Equal(status.OpenStreams))
		Expect(now.InstancesAttached).To(Equal(status.InstancesAttached))
		Expect(now.PinnedInUse).To(Equal(status.PinnedInUse))
		Expect(now.OffloadedBytes).To(BeZero())
		Expect(now.LeakedStreams).To(BeZero())

		// The measured window counts only its own work: two more requests
		// on the open stream, then its end, which frees its buffers.
		deflate(open, data[rs:2*rs])
		deflate(open, data[2*rs:3*rs])
		open.NextOut = buf
		Expect(open.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStreamEnd))
		Expect(open.DeflateEnd()).To(Succeed())
		st := p.Stats()
		Expect(st.HWRequests).To(BeNumerically(">=", 2))
		Expect(st.HWBytesIn).To(BeEquivalentTo(2 * rs))
		Expect(st.SWBytesIn).To(BeZero())
		Expect(st.DeflateStreams).To(BeZero())
		Expect(st.StreamsEnded).To(BeEquivalentTo(1))
		Expect(st.PinnedAllocs).To(BeZero())
		Expect(st.PinnedFrees).To(BeEquivalentTo(2))
		Expect(st.PinnedBytesInUse).To(BeZero())
		Expect(st.PinnedBytesPeak).To(Equal(before.PinnedBytesInUse))
	})

	It("counts streams leaked at Exit only in the window they were reclaimed in", func() {
		p, _, _ := newFakeProcess(zlibshim.PolicyFailover)
		_, err := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatRaw, Level: 1})
		Expect(err).NotTo(HaveOccurred())
		p.Exit()
		Expect(p.Stats().StreamsLeaked).To(BeEquivalentTo(1))
		Expect(p.Status().LeakedStreams).To(Equal(1))
		p.ResetStats()
		Expect(p.Stats().StreamsLeaked).To(BeZero())
		Expect(p.Status().LeakedStreams).To(BeZero())
	})
})
