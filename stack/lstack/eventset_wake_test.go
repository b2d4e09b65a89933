package lstack_test

import (
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

var _ = Describe("an event loop on the instance's own core, when its thread sleeps", func() {
	It("pays a same-core wake-up and a switch when a wait that slept is followed by one that finds work", func() {
		pa, _, err := ringdev.NewPair(ringdev.Config{Name: "wake-a"}, ringdev.Config{Name: "wake-b"})
		Expect(err).NotTo(HaveOccurred())
		pool, err := ringdev.NewMempool("wake-a.pool", 256, 2048+hw.DefaultHeadroom)
		Expect(err).NotTo(HaveOccurred())
		Expect(pa.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1})).To(Succeed())
		Expect(pa.SetupRxQueue(0, 128, pool)).To(Succeed())
		Expect(pa.SetupTxQueue(0, 128)).To(Succeed())
		Expect(pa.Start()).To(Succeed())
		in, err := lstack.New(lstack.Config{Iface: iface.Config{Address: "10.9.0.1/24"}, TCP: tcp.DefaultConfig(), Mode: lstack.ModeKernel},
			pa, 0, pool, rand.New(rand.NewPCG(1, 1)))
		Expect(err).NotTo(HaveOccurred())
		set := in.NewEventSet()
		var m hw.CountingMeter
		set.Wait(&m, false) // nothing ready: the thread sleeps
		set.Wait(&m, true)  // woken by the stack's work on its own core
		Expect(m.Counts[hw.CostWakeupSameCore]).To(BeEquivalentTo(1))
		Expect(m.Counts[hw.CostWakeup]).To(BeZero())
		Expect(m.Counts[hw.CostContextSwitch]).To(BeEquivalentTo(1))
	})
})
