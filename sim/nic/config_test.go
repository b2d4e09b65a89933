package nic_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
	"github.com/savanna-sim/savanna/sim/nic"
)

var _ = Describe("Config", func() {
	It("decodes a link with yaml keys", func() {
		var c nic.LinkConfig
		Expect(yamlstrict.Decode("s.yaml", []byte(`
ends: [server.eth0, client.eth0]
latency: 10us
jitter: 1us
bandwidth: 10Gbps
loss: 0.01
duplicate: 0.001
reorder: 0.002
reorder_delay: 30us
corrupt: 0.0001
crc_errors: 0.0001
flaps:
  - {at: 1s, down_for: 100ms}
  - {at: 2s, down_for: 10ms, every: 1s, count: 3}
`), &c)).To(Succeed())
		Expect(c.Validate()).To(Succeed())
		Expect(c.Latency).To(Equal(10 * time.Microsecond))
		Expect(c.Flaps[1]).To(Equal(nic.FlapConfig{At: 2 * time.Second, DownFor: 10 * time.Millisecond, Every: time.Second, Count: 3}))
	})

	DescribeTable("rejects bad link keys, naming them",
		func(c nic.LinkConfig, msg string) {
			Expect(c.Validate()).To(MatchError(ContainSubstring(msg)))
		},
		Entry("ends", nic.LinkConfig{Ends: []string{"a.b"}}, "ends: 1 ends given"),
		Entry("loss", nic.LinkConfig{Loss: 1.5}, "loss: 1.5 is not a probability"),
		Entry("corrupt", nic.LinkConfig{Corrupt: -0.1}, "corrupt: -0.1"),
		Entry("latency", nic.LinkConfig{Latency: -1}, "latency: -1ns is negative"),
		Entry("bandwidth", nic.LinkConfig{Bandwidth: "fast"}, `bandwidth: "fast" is not a rate`),
		Entry("flap down_for", nic.LinkConfig{Flaps: []nic.FlapConfig{{At: 1}}}, "flaps[0].down_for"),
		Entry("flap every", nic.LinkConfig{Flaps: []nic.FlapConfig{{DownFor: 2, Every: 1}}}, "flaps[0].every"),
		Entry("flap count", nic.LinkConfig{Flaps: []nic.FlapConfig{{DownFor: 2, Count: 2}}}, "flaps[0].count"),
	)

	DescribeTable("parses bandwidths",
		func(s string, want int64) {
			Expect(nic.ParseBandwidth(s)).To(Equal(want))
		},
		Entry(nil, "10Gbps", int64(10e9)),
		Entry(nil, "25 Gbit/s", int64(25e9)),
		Entry(nil, "100M", int64(100e6)),
		Entry(nil, "2.5gbps", int64(2.5e9)),
		Entry(nil, "1e9", int64(1e9)),
	)

	It("decodes and validates a NIC", func() {
		var c nic.PortConfig
		Expect(yamlstrict.Decode("s.yaml", []byte(`
name: eth0
model: hi1822-25g
numa_node: 1
rx_queues: 4
rx_ring: 1024
rss_hash: [ipv4, ipv4_tcp]
rx_offloads: [ipv4_cksum, tcp_cksum]
tx_offloads: [ipv4_cksum, tcp_cksum, udp_cksum]
`), &c)).To(Succeed())
		Expect(c.Validate()).To(Succeed())
	})

	DescribeTable("rejects bad NIC keys, naming them",
		func(c nic.PortConfig, msg string) {
			if c.Name == "" {
				c.Name = "eth0"
			}
			if c.Model == "" {
				c.Model = "x710-10g"
			}
			Expect(c.Validate()).To(MatchError(ContainSubstring(msg)))
		},
		Entry("model", nic.PortConfig{Model: "ne2000"}, `model: nic preset "ne2000": unknown`),
		Entry("rx_ring", nic.PortConfig{RxRing: 3000}, "rx_ring: 3000 is not a power of two"),
		Entry("tx_ring", nic.PortConfig{TxRing: 8192}, "tx_ring: 8192 is outside x710-10g's range 64..4096"),
		Entry("rx_queues", nic.PortConfig{RxQueues: 100}, "rx_queues: 100"),
		Entry("mac", nic.PortConfig{MAC: "zz"}, "mac:"),
		Entry("rss_key", nic.PortConfig{RSSKey: "abcd"}, "rss_key: 2 bytes"),
		Entry("rss_hash", nic.PortConfig{RSSHash: []string{"ipx"}}, `rss_hash: "ipx": unknown`),
		Entry("rx_offloads", nic.PortConfig{RxOffloads: []string{"lro"}}, "rx_offloads:"),
		Entry("speed", nic.PortConfig{Speed: "x"}, "speed:"),
	)

	It("validates switches", func() {
		Expect((&nic.SwitchConfig{Name: "s", Ports: 1}).Validate()).To(MatchError(ContainSubstring("ports: 1")))
		Expect((&nic.SwitchConfig{Name: "s", Ports: 4}).Validate()).To(Succeed())
	})

	It("lists presets with their figures", func() {
		Expect(nic.PresetNames()).To(Equal([]string{"e810-100g", "hi1822-25g", "x710-10g"}))
		p, err := nic.Preset("hi1822-25g")
		Expect(err).NotTo(HaveOccurred())
		Expect(p.SpeedMbps).To(Equal(25000))
		Expect(p.MaxRing).To(Equal(4096))
		Expect(p.RETASize).To(Equal(256))
	})
})
