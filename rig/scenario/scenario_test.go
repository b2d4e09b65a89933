package scenario_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/scenario"
)

const base = `version: 1
name: t
seed: 5
hosts:
  server:
    machine: kunpeng920-4826-2p
    nics:
      - {name: eth0, model: hi1822-25g, ip: 10.0.0.1/24}
    stack: {kind: lstack, cores: [1, 2]}
    apps:
      - {kind: testpmd, nic: eth0, core: 1}
  client:
    machine: kunpeng920-4826-2p
    nics:
      - {name: eth0, model: hi1822-25g, ip: 10.0.0.2/24}
links:
  - ends: [server.eth0, client.eth0]
    latency: 10us
`

var _ = Describe("loading", func() {
	It("loads a file as the single variant default", func() {
		s, err := scenario.Parse("t.yaml", []byte(base))
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Variants).To(HaveLen(1))
		Expect(s.Variants[0].Name).To(Equal("default"))
		Expect(s.Variants[0].Seed()).To(Equal(uint64(5)))
		Expect(s.Hash).To(HaveLen(64))
	})

	DescribeTable("errors name file, line, column and key",
		func(edit, want string) {
			_, err := scenario.Parse("t.yaml", []byte(base+edit))
			Expect(err).To(MatchError(MatchRegexp(want)))
		},
		Entry("an unknown top-level key", "expekt: []\n", `t\.yaml:19:1: key "expekt": unknown key`),
		Entry("a wrong type", "duration: fast\n", `t\.yaml:19:11: key "duration": expected a duration`),
		Entry("a link end that does not exist", "  - ends: [server.eth1, client.eth0]\n", `t\.yaml:19:\d+: key "links\[1\]\.ends\[0\]": no NIC "server\.eth1"`),
		Entry("a probability out of range", "  - {ends: [server.eth0, client.eth0], loss: 1.5}\n", `key "links\[1\]\.loss": 1\.5 is not a probability`),
		Entry("an event with two actions", "events:\n  - {at: 1ms, link_down: server.eth0, link_up: server.eth0}\n", `key "events\[0\]": an event has exactly one action`),
		Entry("a capture of an unknown NIC", "capture: [client.eth9]\n", `key "capture\[0\]": no NIC "client\.eth9"`),
		Entry("a bad variant name", "variants:\n  bad-name: {}\n", `key "variants\.bad-name": variant names are identifiers`),
	)

	It("rejects a bad stack kind with its key", func() {
		_, err := scenario.Parse("t.yaml", []byte(replace(base, "kind: lstack", "kind: dpdk")))
		Expect(err).To(MatchError(ContainSubstring(`t.yaml:9:13: key "hosts.server.stack.kind": stack kind "dpdk"; expected lstack or kernel`)))
	})

	It("requires version 1 and a name", func() {
		_, err := scenario.Parse("t.yaml", []byte(replace(base, "version: 1", "version: 2")))
		Expect(err).To(MatchError(ContainSubstring(`key "version": version is 2`)))
		_, err = scenario.Parse("t.yaml", []byte("version: 1\nhosts: {}\n"))
		Expect(err).To(MatchError(ContainSubstring(`key "name": name is required`)))
	})
})

var _ = Describe("variants", func() {
	It("apply dotted overrides, in file order, leaving the base untouched", func() {
		s, err := scenario.Parse("t.yaml", []byte(base+`variants:
  kernel: {hosts.server.stack.kind: kernel, "links[0].loss": 0.01}
  lstack: {}
  lossy: {links.0.loss: 0.05, seed: 9}
`))
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Variants).To(HaveLen(3))
		k, l, x := s.Variants[0], s.Variants[1], s.Variants[2]
		Expect(k.Name).To(Equal("kernel"))
		Expect(k.File.Hosts["server"].Stack.Kind).To(Equal("kernel"))
		Expect(k.File.Links[0].Loss).To(Equal(0.01))
		Expect(l.File.Hosts["server"].Stack.Kind).To(Equal("lstack"))
		Expect(l.File.Links[0].Loss).To(BeZero())
		Expect(x.File.Links[0].Loss).To(Equal(0.05))
		Expect(x.Seed()).To(Equal(uint64(9)))
		Expect(s.File.Hosts["server"].Stack.Kind).To(Equal("lstack"))
	})

	It("name the variant and path of a bad override", func() {
		_, err := scenario.Parse("t.yaml", []byte(base+"variants:\n  v: {hosts.nobody.stack.kind: kernel}\n"))
		Expect(err).To(MatchError(MatchRegexp(`t\.yaml:20:7: key "variants\.v\.hosts\.nobody\.stack\.kind": no key "nobody" at hosts`)))
		_, err = scenario.Parse("t.yaml", []byte(base+"variants:\n  v: {links.3.loss: 0.1}\n"))
		Expect(err).To(MatchError(ContainSubstring(`"3" is not an index of the list at links (it has 1 items)`)))
	})

	It("still reject a misspelt key that an override adds", func() {
		_, err := scenario.Parse("t.yaml", []byte(base+"variants:\n  v: {links.0.los: 0.1}\n"))
		Expect(err).To(MatchError(ContainSubstring(`variant v: t.yaml:20:7: key "links[0].los": unknown key`)))
	})

	It("validate the result of overrides", func() {
		_, err := scenario.Parse("t.yaml", []byte(base+"variants:\n  v: {hosts.server.stack.kind: dpdk}\n"))
		Expect(err).To(MatchError(ContainSubstring(`variant v: t.yaml:20:7: key "hosts.server.stack.kind": stack kind "dpdk"`)))
	})
})

func replace(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	Fail("no " + old)
	return s
}
