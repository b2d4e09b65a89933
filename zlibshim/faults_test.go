package zlibshim_test

import (
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/zlibshim"
)

// faultCase sets a fault on the fake service and clears it.
type faultCase struct {
	set, clear func(*fakeService)
	reason     func(zlibshim.FallbackCounts) uint64
	// atStart: the fault is there before the stream takes resources
	// (instances and pinned memory are taken on first use and kept).
	atStart bool
}

var _ = Describe("Faults on a fake device", func() {
	const requests = 32
	r := rand.New(rand.NewPCG(3, 3))
	data := textOf(r, requests*zlibshim.DefaultRequestSize, []string{"fault ", "table ", "row ", "QAT ", "engine ", "hang ", "\n"})

	DescribeTable("no byte lost or doubled, the reason counted, hardware back after the fault clears",
		func(f zlibshim.Format, fc faultCase) {
			p, svc, _ := newFakeProcess(zlibshim.PolicyFailover)
			d, err := p.NewDeflater(zlibshim.DeflateOptions{Format: f, Level: 6})
			Expect(err).NotTo(HaveOccurred())
			var comp []byte
			buf := make([]byte, 1<<20)
			rs := zlibshim.DefaultRequestSize
			for i := 0; i < requests; i++ {
				switch {
				case i == 0 && fc.atStart, i == 4 && !fc.atStart:
					fc.set(svc)
				case i == 6:
					fc.clear(svc)
				}
				d.NextIn, d.NextOut = data[i*rs:(i+1)*rs], buf
				Expect(d.Deflate(zlibshim.NoFlush)).To(Succeed())
				Expect(d.NextIn).To(BeEmpty())
				comp = append(comp, buf[:len(buf)-len(d.NextOut)]...)
			}
			d.NextOut = buf
			Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStreamEnd))
			comp = append(comp, buf[:len(buf)-len(d.NextOut)]...)
			Expect(d.DeflateEnd()).To(Succeed())

			got, err := goInflate(f, comp)
			Expect(err).NotTo(HaveOccurred())
			same(got, data)
			if gzipBinary() != "" && f != zlibshim.FormatRaw && f != zlibshim.FormatZlib {
				got, err = gunzip(comp)
				Expect(err).NotTo(HaveOccurred())
				same(got, data)
			}

			st := p.Stats()
			Expect(fc.reason(st.Fallbacks)).To(BeNumerically(">=", 1), "reason counted: %+v", st.Fallbacks)
			Expect(st.ReturnsToHW).To(BeEquivalentTo(1))
			Expect(st.BackoffRequests).To(BeEquivalentTo(zlibshim.DefaultRetryAfter))
			Expect(st.HWBytesIn+st.SWBytesIn).To(BeEquivalentTo(len(data)), "every byte compressed exactly once")
			Expect(st.HWRequests).To(BeNumerically(">=", requests-12))
			Expect(p.Status().HardwareAvailable).To(BeTrue())
			p.Exit()
			Expect(svc.pinnedUsed).To(BeZero())
			Expect(svc.attached).To(BeZero())
		},
		func() []TableEntry {
			cases := map[string]faultCase{
				"no instance": {
					set: func(s *fakeService) { s.noInstance = true }, clear: func(s *fakeService) { s.noInstance = false },
					reason: func(f zlibshim.FallbackCounts) uint64 { return f.NoInstance }, atStart: true,
				},
				"USDM exhausted": {
					set: func(s *fakeService) { s.noPinned = true }, clear: func(s *fakeService) { s.noPinned = false },
					reason: func(f zlibshim.FallbackCounts) uint64 { return f.NoPinnedMemory }, atStart: true,
				},
				"engine error mid-stream": {
					set: func(s *fakeService) { s.dev.failNext = 1 }, clear: func(s *fakeService) {},
					reason: func(f zlibshim.FallbackCounts) uint64 { return f.EngineError },
				},
				"hang mid-stream": {
					set: func(s *fakeService) { s.dev.hang = true }, clear: func(s *fakeService) { s.dev.clearHang() },
					reason: func(f zlibshim.FallbackCounts) uint64 { return f.Timeout },
				},
				"reset mid-stream": {
					set:    func(s *fakeService) { s.dev.reset, s.down = true, true },
					clear:  func(s *fakeService) { s.dev.reset, s.down = false, false },
					reason: func(f zlibshim.FallbackCounts) uint64 { return f.DeviceDown },
				},
			}
			var es []TableEntry
			for _, name := range []string{"no instance", "USDM exhausted", "engine error mid-stream", "hang mid-stream", "reset mid-stream"} {
				for _, f := range formats {
					es = append(es, Entry(name+", "+f.String(), f, cases[name]))
				}
			}
			return es
		}(),
	)

	It("fails requests under hardware-only instead of falling back", func() {
		p, svc, _ := newFakeProcess(zlibshim.PolicyHardwareOnly)
		svc.noInstance = true
		d, err := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: 1})
		Expect(err).NotTo(HaveOccurred())
		d.NextIn, d.NextOut = data[:100], make([]byte, 1000)
		Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrHardware))
		Expect(p.Stats().HardwareOnlyErrors).To(BeEquivalentTo(1))
		Expect(p.Stats().Fallbacks.NoInstance).To(BeEquivalentTo(1))
		Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrHardware), "the error is sticky")
		_ = d.DeflateEnd()
		Expect(svc.pinnedUsed).To(BeZero())
	})

	It("frees a hung request's buffers when its late completion arrives", func() {
		p, svc, _ := newFakeProcess(zlibshim.PolicyFailover, func(c *zlibshim.Config) { c.InstancePerStream = true })
		d, _ := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: 1})
		svc.dev.hang = true
		out := make([]byte, 1<<20)
		d.NextIn, d.NextOut = data[:200_000], out
		Expect(d.Deflate(zlibshim.NoFlush)).To(Succeed())
		st := p.Stats()
		Expect(st.Fallbacks.Timeout).To(BeEquivalentTo(1))
		Expect(st.PinnedBytesInUse).To(BeZero(), "detaching the instance drops the hung request, so its buffers are freed")
		Expect(svc.pinnedUsed).To(BeZero())
		Expect(d.DeflateEnd()).To(MatchError(zlibshim.ErrData)) // ended before Finish with data staged
	})
})
