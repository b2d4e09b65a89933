package rig_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig"
)

// redis6 is a short gazelle-redis on IPv6 addresses with target.
func redis6(target string) []string {
	return []string{
		"ip: 10.0.0.1/24", "ip: fd00::1/64",
		"ip: 10.0.0.2/24", "ip: fd00::2/64",
		"target: 10.0.0.1:6379", "target: " + target,
		"duration: 2500ms", "duration: 5ms",
		"requests: 100000", "requests: 200",
		"clients: 1000", "clients: 20",
	}
}

var _ = Describe("a scenario over IPv6 (RFC 8200)", func() {
	It("refuses a target of the other family than the client's NIC, naming the key", func() {
		s := bundled("gazelle-redis", "ip: 10.0.0.1/24", "ip: fd00::1/64", "target: 10.0.0.1:6379", `target: "[fd00::1]:6379"`)
		_, err := rig.Run(s, rig.Options{})
		Expect(err).To(MatchError(ContainSubstring(`hosts.client.apps[0].target`)))
		Expect(err).To(MatchError(ContainSubstring("not of the family of NIC eth0's address 10.0.0.2")))
	})

	It("reports the IPv6 counters of IPv6 hosts only (IPv4 reports keep their figures)", func() {
		r := runScenario(bundled("gazelle-redis", redis6(`"[fd00::1]:6379"`)...))
		// MLD reports for the solicited-node groups go out at start
		// (RFC 3810 section 5.2), whatever the traffic.
		Expect(inputLeaf(r.Figures["lstack"], "server", "stack", "0", "iface6", "ndp", "tx_reports")).To(BeNumerically(">=", 1))
		// No DAD on scenario addresses (rig/ipv6.go).
		Expect(inputLeaf(r.Figures["lstack"], "server", "stack", "0", "iface6", "ndp", "tx_dad_solicits")).To(Or(BeNil(), BeZero()))
		r4 := runScenario(bundled("gazelle-redis", "duration: 2500ms", "duration: 5ms", "requests: 100000", "requests: 200", "clients: 1000", "clients: 20"))
		Expect(inputLeaf(r4.Figures["lstack"], "server", "stack", "0", "iface6")).To(BeNil())
		Expect(inputLeaf(r4.Figures["lstack"], "server", "stack", "0", "iface")).NotTo(BeNil())
	})
})
