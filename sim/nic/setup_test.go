package nic_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
)

var _ = Describe("Setup", func() {
	It("configures and starts a port from its scenario entry", func() {
		eng := sim.NewEngine(1)
		mem := newTestMem(1<<10, 2)
		cfg := nic.PortConfig{Name: "eth0", Model: "hi1822-25g", NUMANode: 1, RxRing: 1024, RxOffloads: []string{"ipv4_cksum"}}
		p, err := nic.NewPort(eng, 0, cfg)
		Expect(err).NotTo(HaveOccurred())
		pools, err := nic.SetupOnNodes(p, cfg, mem, 4, 4, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(pools).To(HaveLen(4))
		Expect(pools[3].Name()).To(Equal("eth0-rx3"))
		Expect(pools[0].NUMANode()).To(Equal(1))
		Expect(pools[0].Stats().Size).To(Equal(2*1024 + 1024))
		Expect(p.Link().Up).To(BeFalse()) // no link yet
		conf, err := cfg.PortConf(4, 4)
		Expect(err).NotTo(HaveOccurred())
		Expect(conf.RSSHashTypes).To(Equal(hw.RSSIPv4 | hw.RSSIPv4TCP | hw.RSSIPv4UDP | hw.RSSIPv6 | hw.RSSIPv6TCP | hw.RSSIPv6UDP))
		Expect(conf.RxOffloads).To(Equal(hw.RxOffloadIPv4Checksum))
	})

	It("fails cleanly when the node's hugepages run out, returning what it took", func() {
		eng := sim.NewEngine(1)
		mem := newTestMem(5, 1) // 10 MiB: room for one pool of 3072 × 2176 bytes
		cfg := nic.PortConfig{Name: "eth0", Model: "hi1822-25g", RxRing: 1024}
		p, err := nic.NewPort(eng, 0, cfg)
		Expect(err).NotTo(HaveOccurred())
		_, err = nic.SetupOnNodes(p, cfg, mem, 2, 2, nil)
		Expect(err).To(MatchError(hw.ErrNoHugepages))
		Expect(err).To(MatchError(ContainSubstring(`nic "eth0" rx queue 1`)))
		Expect(mem.freePages[0]).To(Equal(int64(5)))
	})

	It("puts each rx queue's pool on the node its caller names, as Gazelle's per-core pools", func() {
		eng := sim.NewEngine(1)
		mem := newTestMem(1<<10, 2)
		cfg := nic.PortConfig{Name: "eth0", Model: "hi1822-25g", NUMANode: 0, RxRing: 1024}
		p, err := nic.NewPort(eng, 0, cfg)
		Expect(err).NotTo(HaveOccurred())
		pools, err := nic.SetupOnNodes(p, cfg, mem, 4, 4, func(q int) int { return q % 2 })
		Expect(err).NotTo(HaveOccurred())
		Expect([]int{pools[0].NUMANode(), pools[1].NUMANode(), pools[2].NUMANode(), pools[3].NUMANode()}).To(Equal([]int{0, 1, 0, 1}))
		Expect(mem.freePages[0]).To(Equal(mem.freePages[1]), "two pools taken from each node")
	})
})
