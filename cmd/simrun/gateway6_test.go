//go:build !dpdk

package main

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// A second prefix on Linux's side of the TAP, off-link for Savanna (its
// only on-link prefix is fd00::/64): its replies reach it only through
// a default router.
const (
	live6Router = "fe80::1"
	live6Far    = "2001:db8:77::1"
)

var _ = Describe("simrun serve --gateway6, live against Linux", Label("live"), func() {
	// ping6From pings the stack from src in the namespace and returns
	// how many of count echoes came back.
	ping6From := func(ns func(string, ...string) (string, error), src string, count int) string {
		out, _ := ns("ping", "-6", "-c", fmt.Sprint(count), "-i", "0.2", "-W", "1", "-I", src, live6Stack)
		GinkgoWriter.Printf("ping -6 -I %s %s:\n%s\n", src, live6Stack, out)
		if m := pingReceived.FindStringSubmatch(out); m != nil {
			return m[2]
		}
		return ""
	}
	start := func(args ...string) (func(string, ...string) (string, error), func() map[string]int64) {
		s := liveServe6(nil, false, append([]string{"--ip", live6Stack + "/64", "--app", "echo", "--port", "7"}, args...)...)
		// Linux is the router: fe80::1 and the off-link prefix on sv0.
		for _, a := range []string{live6Router + "/64", live6Far + "/64"} {
			out, err := s.Exec(10*time.Second, "ip", "-6", "addr", "add", a, "dev", "sv0", "nodad")
			Expect(err).NotTo(HaveOccurred(), out)
		}
		exec := func(name string, args ...string) (string, error) { return s.Exec(20*time.Second, name, args...) }
		stop := func() map[string]int64 {
			Expect(s.Stop()).To(Succeed())
			return map[string]int64{
				"no_routes":            s.Stat("lcore0 ipv6", "ipv6_out.no_routes"),
				"tx_neighbor_solicits": s.Stat("lcore0 ipv6", "ndp.tx_neighbor_solicits"),
			}
		}
		return exec, stop
	}

	It("answers a ping from an off-link address through the default router, which it resolves by Neighbor Discovery", func() {
		live6Skip("ping")
		exec, stop := start("--gateway6", live6Router)
		// Linux's own fe80::1 answers Savanna's solicitation for it, so
		// the replies go to sv0's MAC and Linux takes them for
		// 2001:db8:77::1.
		Eventually(func() string { return ping6From(exec, live6Far, 3) }).WithTimeout(20 * time.Second).
			WithPolling(500 * time.Millisecond).Should(Equal("3"))
		stats := stop()
		Expect(stats["no_routes"]).To(BeZero())
		Expect(stats["tx_neighbor_solicits"]).To(BeNumerically(">=", 1), "the router resolved by ND")
	})

	It("has no route to that address without --gateway6 (counted in ipv6_out.no_routes)", func() {
		live6Skip("ping")
		exec, stop := start()
		Expect(ping6From(exec, live6Far, 3)).To(Equal("0"))
		Expect(stop()["no_routes"]).To(BeNumerically(">=", 1))
	})
})

var _ = Describe("simrun serve's --gateway6", func() {
	parse := func(args ...string) (serveConfig, string, bool) {
		var errOut strings.Builder
		c, _, ok := parseServeFlags(append([]string{"--tap", "x", "--app", "kv", "--port", "6379"}, args...), &errOut)
		return c, errOut.String(), ok
	}

	It("configures the IPv6 default router, keeping --dad-transmits", func() {
		c, errOut, ok := parse("--ip", "fd00::2/64", "--gateway6", "fe80::1", "--dad-transmits", "2")
		Expect(ok).To(BeTrue(), errOut)
		ic := c.ifaceConfig()
		Expect(ic.Validate()).To(Succeed())
		Expect(ic.IPv6.NDSet).To(BeTrue())
		Expect(ic.IPv6.ND.DefaultRouter).To(Equal(netip.MustParseAddr("fe80::1")))
		Expect(ic.IPv6.ND.DupAddrDetectTransmits).To(Equal(2))

		c, errOut, ok = parse("--ip", "fd00::2/64")
		Expect(ok).To(BeTrue(), errOut)
		Expect(c.ifaceConfig().IPv6.ND.DefaultRouter.IsValid()).To(BeFalse(), "none without the flag")
	})

	DescribeTable("refuses what is not an IPv6 router address, naming the flag",
		func(want string, args ...string) {
			_, errOut, ok := parse(args...)
			Expect(ok).To(BeFalse())
			Expect(errOut).To(ContainSubstring(want))
		},
		Entry("without an IPv6 address", "--gateway6 fe80::1: needs an IPv6 --ip", "--ip", "10.77.0.2/24", "--gateway6", "fe80::1"),
		Entry("not an address", `--gateway6 "router": not an IPv6 address`, "--ip", "fd00::2/64", "--gateway6", "router"),
		Entry("a multicast address", "--gateway6 ff02::2: ipv6.nd.default_router: ff02::2 is not an IPv6 unicast address", "--ip", "fd00::2/64", "--gateway6", "ff02::2"),
		Entry("an IPv4 address", "--gateway6 10.77.0.1: ipv6.nd.default_router:", "--ip", "fd00::2/64", "--gateway6", "10.77.0.1"),
	)
})
