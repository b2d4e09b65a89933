//go:build dpdk

package dpdk_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw/dpdk"
)

var _ = Describe("EAL", Label("dpdk"), func() {
	It("reports the dpdk build", func() {
		Expect(dpdk.Available()).To(BeTrue())
	})

	It("probed every vdev of the configuration", func() {
		Expect(eal.Ports()).To(ConsistOf("net_ring0", "net_memif0", "net_memif1", "net_memif2", "net_memif3", "net_memif4", "net_memif5"))
		Expect(eal.CompressDevs()).To(ContainElements("compress_zlib", "compress_isal"))
	})

	It("refuses a second rte_eal_init in the process", func() {
		_, err := dpdk.Init(suiteConfig())
		Expect(err).To(MatchError(ContainSubstring("rte_eal_init")))
	})

	It("names an unknown port and lists the probed ones", func() {
		_, err := eal.OpenPort("net_nonesuch0")
		Expect(err).To(MatchError(ContainSubstring(`port "net_nonesuch0"`)))
		Expect(err).To(MatchError(ContainSubstring("net_memif0")))
	})

	DescribeTable("validates its configuration",
		func(cfg dpdk.Config, msg string) {
			Expect(cfg.Validate()).To(MatchError(ContainSubstring(msg)))
		},
		Entry("empty argument", dpdk.Config{Args: []string{"-l", ""}}, "eal_args[1]: empty"),
		Entry("--in-memory with --no-huge", dpdk.Config{Args: []string{"--no-huge", "--in-memory"}}, "--in-memory cannot be combined"),
		Entry("a flag as vdev", dpdk.Config{VDevs: []string{"--vdev=net_ring0"}}, "vdevs[0]"),
	)

	It("passes EAL arguments and vdevs through in order", func() {
		Expect(dpdk.Config{Args: []string{"-l", "0"}, VDevs: []string{"net_ring0"}}.Argv()).
			To(Equal([]string{"savanna", "-l", "0", "--vdev=net_ring0"}))
	})

	It("registers a locked goroutine's thread as an lcore", func() {
		type res struct {
			id, after int
			err       error
		}
		ch := make(chan res)
		go func() {
			id, err := eal.RegisterThread()
			r := res{id: id, err: err}
			if err == nil {
				r.after = eal.LcoreID()
				eal.UnregisterThread()
			}
			ch <- r
		}()
		r := <-ch
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.id).To(BeNumerically(">", 0)) // lcore 0 is the main lcore (-l 0)
		Expect(r.after).To(Equal(r.id))
	})
})
