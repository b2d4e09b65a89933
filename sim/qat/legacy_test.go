package qat_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
)

// kernelTime is what m's kernel-mode ops cost at its prices.
func kernelTime(m *priceMeter) time.Duration {
	var t time.Duration
	for op := hw.CostOp(0); int(op) < hw.NumCostOps; op++ {
		if op.Mode() == hw.CPUKernel {
			t += m.price[op] * time.Duration(m.Counts[op])
		}
	}
	return t
}

var _ = Describe("legacy contiguous allocation vs USDM", func() {
	// requests runs n requests that each allocate and free a 384 KiB
	// stream's buffers (a zlib deflate state plus two 64 KiB buffers, as
	// the shim does per HTTP request) and returns the kernel time of
	// request 1, 10, 100, 1000 ...
	requests := func(driver qat.Driver, n int) ([]time.Duration, *qat.Service) {
		svc := newService(newFakeHuge(100, 1), qat.DeviceConfig{Model: "dh895xcc", Driver: driver})
		m := newPriceMeter()
		svc.BindProcess(1, m)
		_, err := svc.Attach(1, 0)
		Expect(err).NotTo(HaveOccurred())
		var samples []time.Duration
		for i := 1; i <= n; i++ {
			before := kernelTime(m)
			buf, err := svc.AllocPinned(1, 384<<10, 0)
			Expect(err).NotTo(HaveOccurred())
			Expect(svc.FreePinned(buf)).To(Succeed())
			if i == 1 || i == 10 || i == 100 || i == 1000 || i == 3000 {
				samples = append(samples, kernelTime(m)-before)
			}
		}
		return samples, svc
	}

	It("legacy: kernel time per request rises as fragmentation grows, towards tens of milliseconds", func() {
		samples, svc := requests(qat.DriverLegacy, 3000)
		for i := 1; i < len(samples); i++ {
			Expect(samples[i]).To(BeNumerically(">", samples[i-1]), "sample %d", i)
		}
		Expect(samples[0]).To(BeNumerically("<", time.Millisecond))
		Expect(samples[len(samples)-1]).To(BeNumerically(">", 10*time.Millisecond))
		ns := svc.NodeStats(0)
		Expect(ns.Fragmentation).To(BeNumerically(">", 0.95))
		Expect(ns.KernelAllocs).To(BeEquivalentTo(3000))
		Expect(ns.CompactedPages).To(BeNumerically(">", 1000000))
		Expect(svc.ProcessStats(1).Syscalls.Ioctl).To(BeEquivalentTo(1 + 2*3000))
		GinkgoWriter.Printf("legacy kernel time per request at 1, 10, 100, 1000, 3000: %v\n", samples)
	})

	It("USDM: no kernel time per request once the page is mapped, however long the run", func() {
		samples, svc := requests(qat.DriverOOT40052, 3000)
		Expect(samples[0]).To(Equal(400*time.Nanosecond + 2000*time.Nanosecond)) // the first page: ioctl + mmap
		for _, s := range samples[1:] {
			Expect(s).To(BeZero())
		}
		Expect(svc.NodeStats(0).CompactedPages).To(BeZero())
	})

	It("documents its formula: pages migrated = n f/(1-f)", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "dh895xcc", Driver: qat.DriverLegacy})
		f := svc.Fragmentation(0)
		Expect(f).To(Equal(qat.DefaultLegacyConfig().InitialFragmentation))
		Expect(svc.CompactionPages(0, 96*4096)).To(BeEquivalentTo(int64(96*f/(1-f) + 0.5)))
	})
})
