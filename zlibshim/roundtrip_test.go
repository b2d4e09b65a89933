package zlibshim_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/zlibshim"
)

var formats = []zlibshim.Format{zlibshim.FormatRaw, zlibshim.FormatZlib, zlibshim.FormatGzip, zlibshim.FormatGzipExt}
var policies = []zlibshim.Policy{zlibshim.PolicySoftwareOnly, zlibshim.PolicyFailover, zlibshim.PolicyHardwareOnly}
var flushes = []zlibshim.Flush{zlibshim.NoFlush, zlibshim.SyncFlush, zlibshim.FullFlush, zlibshim.Finish}

// roundTrip compresses every corpus item and checks that Go's readers,
// the shim's reader and (for gzip formats) gzip -d give it back.
func roundTrip(items []corpusItem, f zlibshim.Format, level int, flush zlibshim.Flush, policy zlibshim.Policy) {
	p, svc, _ := newFakeProcess(policy)
	// gzip -d runs once over all members of a combination.
	var allComp, allData []byte
	for _, it := range items {
		By(it.name)
		d, err := p.NewDeflater(zlibshim.DeflateOptions{Format: f, Level: level})
		Expect(err).NotTo(HaveOccurred())
		inStep := len(it.data) + 1
		if flush != zlibshim.NoFlush && flush != zlibshim.Finish {
			inStep = 7919 // a flush every 7919 bytes
		}
		comp, err := deflateAll(d, it.data, flush, inStep, 4096)
		Expect(err).NotTo(HaveOccurred(), it.name)
		Expect(d.DeflateEnd()).To(Succeed())
		Expect(d.TotalIn).To(BeEquivalentTo(len(it.data)))
		Expect(d.TotalOut).To(BeEquivalentTo(len(comp)))

		got, err := goInflate(f, comp)
		Expect(err).NotTo(HaveOccurred(), "Go reader, "+it.name)
		same(got, it.data)
		got, err = shimInflate(p, f, comp)
		Expect(err).NotTo(HaveOccurred(), "shim reader, "+it.name)
		same(got, it.data)
		allComp = append(allComp, comp...)
		allData = append(allData, it.data...)
	}
	if (f == zlibshim.FormatGzip || f == zlibshim.FormatGzipExt) && gzipBinary() != "" {
		By("gzip -d")
		got, err := gunzip(allComp)
		Expect(err).NotTo(HaveOccurred(), "gzip -d")
		same(got, allData)
	}
	st := p.Stats()
	switch {
	case policy == zlibshim.PolicySoftwareOnly || level == 0:
		Expect(st.HWRequests).To(BeZero())
	default:
		Expect(st.HWRequests).NotTo(BeZero(), "hardware served nothing")
		Expect(st.Fallbacks.Total()).To(BeZero())
	}
	if policy == zlibshim.PolicyHardwareOnly && level > 0 {
		Expect(st.SWBytesIn).To(BeZero(), "hardware-only compressed in software")
	}
	Expect(p.Status().OpenStreams).To(BeZero())
	Expect(svc.pinnedUsed).To(BeZero(), "pinned memory returned")
}

func roundTripEntries() []TableEntry {
	var es []TableEntry
	for _, f := range formats {
		for _, level := range []int{0, 1, 6, 9} {
			for _, fl := range flushes {
				for _, pol := range policies {
					if level == 0 && pol == zlibshim.PolicyHardwareOnly {
						continue // stored blocks are software's; hardware-only refuses nothing but serves none
					}
					es = append(es, Entry(fmt.Sprintf("%v level %d %v %v", f, level, fl, pol), f, level, fl, pol))
				}
			}
		}
	}
	return es
}

var _ = Describe("Round trips", func() {
	items := corpus(false)

	DescribeTable("every format, level, flush mode and policy inflates back with Go, the shim and gzip -d",
		func(f zlibshim.Format, level int, flush zlibshim.Flush, policy zlibshim.Policy) {
			roundTrip(items, f, level, flush, policy)
		},
		roundTripEntries(),
	)

	DescribeTable("every level 1..9 over gzip with full flushes",
		func(level int) {
			roundTrip(items[:3], zlibshim.FormatGzip, level, zlibshim.FullFlush, zlibshim.PolicyFailover)
		},
		Entry("level 1", 1), Entry("level 2", 2), Entry("level 3", 3), Entry("level 4", 4), Entry("level 5", 5),
		Entry("level 6", 6), Entry("level 7", 7), Entry("level 8", 8), Entry("level 9", 9),
	)

	DescribeTable("16 MiB in every format and policy", Label("slow"),
		func(f zlibshim.Format, policy zlibshim.Policy) {
			big := corpus(true)
			roundTrip(big[len(big)-1:], f, 1, zlibshim.NoFlush, policy)
		},
		func() []TableEntry {
			var es []TableEntry
			for _, f := range formats {
				for _, pol := range policies {
					es = append(es, Entry(fmt.Sprintf("%v %v", f, pol), f, pol))
				}
			}
			return es
		}(),
	)
})
