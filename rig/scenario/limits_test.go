package scenario_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/scenarios"
)

var _ = Describe("limits", func() {
	parse := func(text string) error {
		_, err := scenario.Parse("t.yaml", []byte(text))
		return err
	}
	app := func(keys string) string {
		return strings.Replace(withQAT, "{kind: redis-server, port: 6379}", "{kind: redis-server, port: 6379}\n      - {kind: http, "+keys+"}", 1)
	}

	It("keeps every bundled scenario within them", func() {
		for _, name := range scenarios.Names() {
			data, err := scenarios.Read(name)
			Expect(err).NotTo(HaveOccurred())
			_, err = scenario.Parse(name+".yaml", data)
			Expect(err).NotTo(HaveOccurred(), name)
		}
	})

	It("names each table entry's key once, with a reason", func() {
		seen := map[string]bool{}
		for _, l := range scenario.Limits() {
			id := fmt.Sprint(l.Key, l.Measure)
			Expect(seen).NotTo(HaveKey(id))
			seen[id] = true
			Expect(l.Why).NotTo(BeEmpty(), l.Key)
			Expect(l.Max).To(BeNumerically(">", 0), l.Key)
		}
	})

	DescribeTable("refuses a value over a limit at its key, with the value and the limit",
		func(text, want string) {
			Expect(parse(text)).To(MatchError(HavePrefix(want)))
		},
		Entry("too many pages (issue 17, finding 2)", app("pages: ["+strings.Repeat("1024, ", 64)+"1024]"),
			`t.yaml:15:22: key "hosts.server.apps[1].pages": 65 entries, over the limit of 64`),
		Entry("a page too large", app("pages: [1024, 16777217]"),
			`t.yaml:15:36: key "hosts.server.apps[1].pages[1]": 16777217, over the limit of 16777216`),
		Entry("pages too large together", app("pages: [16777216, 16777216, 16777216, 16777216, 1]"),
			`t.yaml:15:22: key "hosts.server.apps[1].pages": a sum of more than 67108864, over the limit of 67108864`),
		Entry("a number too large for an int64", app("pages: [99999999999999999999]"),
			`t.yaml:15:30: key "hosts.server.apps[1].pages[0]": 99999999999999999999, over the limit of 16777216`),
		Entry("too many clients", strings.Replace(withQAT, "requests: 10}", "requests: 10, clients: 100001}", 1),
			`t.yaml:21:70: key "hosts.client.apps[0].clients": 100001, over the limit of 100000`),
		Entry("too many mbufs", strings.Replace(withQAT, "ip: 10.0.0.1/24}", "ip: 10.0.0.1/24, mbufs: 2000000}", 1),
			`t.yaml:9:58: key "hosts.server.nics[0].mbufs": 2000000, over the limit of 1048576`),
		Entry("pools too large together", strings.Replace(withQAT, "ip: 10.0.0.1/24}", "ip: 10.0.0.1/24, rx_queues: 16, mbufs: 1000000}", 1),
			`t.yaml:9:9: key "hosts.server.nics[0]": its rx mbuf pools take 34816000000 bytes`),
		Entry("too many stack cores", strings.Replace(withQAT, "cores: [1]}", "cores: ["+strings.Repeat("1, ", 256)+"1]}", 1),
			`t.yaml:10:27: key "hosts.server.stack.cores": 257 entries, over the limit of 256`),
		Entry("an inline machine with too many CPUs", strings.Replace(withQAT, "machine: kunpeng920-4826-2p\n    nics:\n      - {name: eth0, model: hi1822-25g, ip: 10.0.0.1/24}",
			"machine: {sockets: 2, nodes_per_socket: 2, cores_per_node: 4096, threads_per_core: 2}\n    nics:\n      - {name: eth0, model: hi1822-25g, ip: 10.0.0.1/24}", 1),
			`t.yaml:7:48: key "hosts.server.machine.cores_per_node": 32768 CPUs`),
		Entry("QAT rings too large", strings.Replace(withQAT, "instances: 4,", "instances: 4096, ring_depth: 1024,", 1),
			`t.yaml:12:9: key "hosts.server.qat[0]": its 4194304 request slots`),
		Entry("too many events", withQAT+"events:\n"+strings.Repeat("  - {at: 1ms, link_up: server.eth0}\n", 10001),
			`t.yaml:24:1: key "events": 10001 entries, over the limit of 10000`),
		Entry("too many variants", withQAT+"variants:\n"+variants(33),
			`t.yaml:24:1: key "variants": 33 entries, over the limit of 32`),
		Entry("a variant over a limit", withQAT+"variants:\n  big: {hosts.client.apps.0.clients: 200000}\n",
			`variant big: t.yaml:25:9: key "hosts.client.apps[0].clients": 200000, over the limit of 100000`),
	)

	It("refuses a file over MaxFileBytes without reading it all", func() {
		path := filepath.Join(GinkgoT().TempDir(), "big.yaml")
		Expect(os.WriteFile(path, make([]byte, scenario.MaxFileBytes+1), 0o644)).To(Succeed())
		_, err := scenario.Load(path)
		Expect(err).To(MatchError(ContainSubstring("larger than 1048576 bytes")))
	})
})

func variants(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  v%d: {}\n", i)
	}
	return b.String()
}
