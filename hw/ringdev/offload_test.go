package ringdev_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
)

var _ = Describe("checksum offload (Config.ChecksumOffload)", func() {
	var pool *ringdev.Mempool
	BeforeEach(func() {
		var err error
		pool, err = ringdev.NewMempool("p", 256, 2048)
		Expect(err).NotTo(HaveOccurred())
	})

	pair := func(offload bool, tx hw.TxOffloads) (*ringdev.Port, *ringdev.Port) {
		a, b, err := ringdev.NewPair(ringdev.Config{Name: "a", ChecksumOffload: offload}, ringdev.Config{Name: "b", ChecksumOffload: offload})
		Expect(err).NotTo(HaveOccurred())
		for _, p := range []*ringdev.Port{a, b} {
			Expect(p.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, TxOffloads: tx})).To(Succeed())
			Expect(p.SetupRxQueue(0, 64, pool)).To(Succeed())
			Expect(p.SetupTxQueue(0, 64)).To(Succeed())
			Expect(p.Start()).To(Succeed())
		}
		return a, b
	}

	It("offers the checksum offloads only when asked to", func() {
		a, _, err := ringdev.NewPair(ringdev.Config{Name: "a"}, ringdev.Config{Name: "b", ChecksumOffload: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Info().TxOffloadCapa).To(BeZero())
		Expect(a.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, TxOffloads: hw.TxOffloadTCPChecksum})).To(MatchError(ContainSubstring("checksum_offload")))
		on, _ := pair(true, hw.TxOffloadIPv4Checksum|hw.TxOffloadTCPChecksum)
		Expect(on.Info().TxOffloadCapa & hw.TxOffloadTCPChecksum).NotTo(BeZero())
		Expect(on.Info().RxOffloadCapa & hw.RxOffloadTCPChecksum).NotTo(BeZero())
		Expect(on.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, TxOffloads: hw.TxOffloadMultiSegs})).To(HaveOccurred())
	})

	DescribeTable("turns what the sender left to the link into receive verdicts",
		func(offload bool, sent, want hw.OffloadFlags) {
			a, b := pair(offload, 0)
			m := tcpFrame(pool, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 1000, 80)
			m.Flags = sent
			Expect(a.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1))
			got := make([]*hw.Mbuf, 4)
			Expect(b.RxBurst(0, got)).To(Equal(1))
			Expect(got[0].Flags).To(Equal(want))
			got[0].Free()
		},
		Entry("IPv4 and TCP offloaded", true, hw.TxIPv4|hw.TxIPChecksum|hw.TxTCPChecksum, hw.TxIPv4|hw.RxIPChecksumGood|hw.RxL4ChecksumGood),
		Entry("UDP offloaded", true, hw.TxIPv4|hw.TxUDPChecksum, hw.TxIPv4|hw.RxL4ChecksumGood),
		Entry("checksummed in software: unmarked, verified by the receiver", true, hw.TxIPv4, hw.TxIPv4),
		Entry("without the option the flags pass untouched", false, hw.TxIPv4|hw.TxTCPChecksum, hw.TxIPv4|hw.TxTCPChecksum),
	)
})
