package iface_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"go.yaml.in/yaml/v3"
)

var _ = Describe("Config", func() {
	DescribeTable("Validate names the key", func(mut func(c *iface.Config), key string) {
		c := cfgA()
		mut(&c)
		Expect(c.Validate()).To(MatchError(HavePrefix(key)))
	},
		Entry("no address", func(c *iface.Config) { c.Address = "" }, "address:"),
		Entry("no prefix", func(c *iface.Config) { c.Address = "10.0.0.1" }, "address:"),
		Entry("IPv6 link-local (formed from the MAC, never configured)", func(c *iface.Config) { c.Address = "fe80::1/64" }, "ipv6.address:"),
		Entry("IPv6 with a small MTU", func(c *iface.Config) { c.Address = "fd00::1/64"; c.MTU = 1000 }, "mtu:"),
		Entry("/32", func(c *iface.Config) { c.Address = "10.0.0.1/32" }, "address:"),
		Entry("network address", func(c *iface.Config) { c.Address = "10.0.0.0/24" }, "address:"),
		Entry("broadcast address", func(c *iface.Config) { c.Address = "10.0.0.255/24" }, "address:"),
		Entry("multicast", func(c *iface.Config) { c.Address = "224.0.0.1/24" }, "address:"),
		Entry("bad MAC", func(c *iface.Config) { c.MAC = "nope" }, "mac:"),
		Entry("group MAC", func(c *iface.Config) { c.MAC = "01:00:5e:00:00:01" }, "mac:"),
		Entry("small MTU", func(c *iface.Config) { c.MTU = 67 }, "mtu:"),
		Entry("off-link gateway", func(c *iface.Config) { c.Gateway = "10.0.1.1" }, "gateway:"),
		Entry("bad gateway", func(c *iface.Config) { c.Gateway = "x" }, "gateway:"),
		Entry("TTL", func(c *iface.Config) { c.TTL = 256 }, "ttl:"),
		Entry("arp", func(c *iface.Config) { c.ARP.MaxEntries = -1 }, "arp.max_entries:"),
		Entry("reassembly", func(c *iface.Config) { c.Reassembly.Timeout = -time.Second }, "reassembly.timeout:"),
		Entry("icmp", func(c *iface.Config) { c.ICMPRateLimit.Rate = -1 }, "icmp_rate_limit.rate:"),
		Entry("udp queue", func(c *iface.Config) { c.UDPRecvQueue = -1 }, "udp_recv_queue:"),
		Entry("ephemeral order", func(c *iface.Config) { c.EphemeralLow, c.EphemeralHigh = 5000, 4000 }, "ephemeral_low:"),
		Entry("ephemeral range", func(c *iface.Config) { c.EphemeralHigh = 70000 }, "ephemeral_high:"),
	)
	It("fills defaults", func() {
		c := cfgA().WithDefaults()
		Expect(c.MTU).To(Equal(1500))
		Expect(c.TTL).To(Equal(64))
		Expect(c.ARP).To(Equal(arp.DefaultConfig()))
		Expect(c.Reassembly).To(Equal(ipv4.DefaultReasmConfig()))
		Expect(c.ICMPRateLimit).To(Equal(icmp.LimiterConfig{Rate: 1000, Burst: 50}))
	})
	It("decodes from YAML with snake_case keys", func() {
		var c iface.Config
		Expect(yaml.Unmarshal([]byte(`
address: 192.168.1.10/24
mac: "02:00:00:00:00:01"
mtu: 9000
gateway: 192.168.1.1
arp: {reachable_time: 30s, pending_per_dest: 8}
reassembly: {timeout: 15s, max_datagrams: 16}
icmp_rate_limit: {rate: 100, burst: 10}
udp_recv_queue: 64
`), &c)).To(Succeed())
		Expect(c.Validate()).To(Succeed())
		Expect(c.ARP.ReachableTime).To(Equal(30 * time.Second))
		Expect(c.Reassembly.MaxDatagrams).To(Equal(16))
		Expect(c.ICMPRateLimit.Burst).To(Equal(10))
	})
	It("New needs a MAC and a link", func() {
		c := cfgA()
		c.MAC = ""
		Expect(c.Validate()).To(Succeed())
		_, err := iface.New(c, &link{pool: newPool(1, 2048)})
		Expect(err).To(MatchError(ContainSubstring("mac: required")))
		_, err = iface.New(cfgA(), nil)
		Expect(err).To(HaveOccurred())
	})
	It("reports what it was given", func() {
		n := newNode(cfgA())
		Expect(n.ifc.Addr()).To(Equal(ipA))
		Expect(n.ifc.MAC()).To(Equal(macA))
		Expect(n.ifc.Netmask()).To(Equal([4]byte{255, 255, 255, 0}))
		Expect(n.ifc.MTU()).To(Equal(1500))
		Expect(n.ifc.MSS()).To(Equal(1460))
		Expect(n.ifc.Config().UDPRecvQueue).To(Equal(256))
	})
})
