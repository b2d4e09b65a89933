package numa_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/savanna-sim/savanna/stack/tcp"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/numa"
)

var _ = Describe("packet memory on another node", func() {
	It("charges remote_numa_byte times the factor per packet, rounded per packet", func() {
		under := &hw.CountingMeter{}
		p := numa.NewPacketMemory(under, 0.2)
		p.PacketBytes(1514) // 302.8
		p.PacketBytes(64)   // 12.8
		p.Charge(tcp.CostSegmentRx, 1)
		Expect(under.Counts[hw.CostRemoteNUMAByte]).To(BeEquivalentTo(303 + 13))
		Expect(under.Counts[tcp.CostSegmentRx]).To(BeEquivalentTo(1))
	})

	It("charges nothing for local memory", func() {
		under := &hw.CountingMeter{}
		numa.NewPacketMemory(under, 0).PacketBytes(1514)
		Expect(under.Counts[hw.CostRemoteNUMAByte]).To(BeZero())
	})
})
