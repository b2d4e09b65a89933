package scenario_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/scenario"
)

// withQAT is base with a QAT device on the server and a redis pair, for
// the specs of events and targets.
const withQAT = `version: 1
name: t
duration: 10ms
warmup: 2ms
hosts:
  server:
    machine: kunpeng920-4826-2p
    nics:
      - {name: eth0, model: hi1822-25g, ip: 10.0.0.1/24}
    stack: {kind: lstack, cores: [1]}
    qat:
      - {model: dh895xcc, numa_node: 0, instances: 4, driver: oot31092}
    apps:
      - {kind: redis-server, port: 6379}
  client:
    machine: kunpeng920-4826-2p
    nics:
      - {name: eth0, model: hi1822-25g, ip: 10.0.0.2/24}
    stack: {kind: lstack, cores: [1]}
    apps:
      - {kind: redis-benchmark, target: 10.0.0.1:6379, requests: 10}
links:
  - ends: [server.eth0, client.eth0]
`

var _ = Describe("bad input", func() {
	parse := func(text string) error {
		_, err := scenario.Parse("t.yaml", []byte(text))
		return err
	}

	It("is valid as written (the specs below each break one thing)", func() {
		Expect(parse(withQAT)).To(Succeed())
	})

	It("refuses an event at a negative time, at events[i].at", func() {
		err := parse(withQAT + "events:\n  - {at: 1ms, link_up: server.eth0}\n  - {at: -1ms, link_down: server.eth0}\n")
		Expect(err).To(MatchError(`t.yaml:26:6: key "events[1].at": -1ms is before the start of the run; an event's at is 0 or later`))
	})

	It("names warmup, at its own line and column, for a negative warm-up", func() {
		err := parse(strings.Replace(withQAT, "warmup: 2ms", "warmup: -3ms", 1))
		Expect(err).To(MatchError(`t.yaml:4:1: key "warmup": -3ms is negative; warmup is 0 or more`))
		err = parse(strings.Replace(withQAT, "duration: 10ms", "duration: -3ms", 1))
		Expect(err).To(MatchError(`t.yaml:3:1: key "duration": -3ms is negative; duration is more than 0 (default 1s when absent)`))
	})

	It("refuses an explicit duration of 0 and keeps the default of 1s when it is absent", func() {
		err := parse(strings.Replace(withQAT, "duration: 10ms", "duration: 0s", 1))
		Expect(err).To(MatchError(ContainSubstring(`t.yaml:3:1: key "duration": a measured phase of 0s measures nothing`)))
		s, err := scenario.Parse("t.yaml", []byte(strings.Replace(withQAT, "duration: 10ms\n", "", 1)))
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Variants[0].File.Duration).To(BeZero())
		Expect(s.Variants[0].File.Span()).To(Equal(s.Variants[0].File.Warmup + scenario.DefaultDuration))
		Expect(scenario.DefaultDuration.String()).To(Equal("1s"))
	})

	It("refuses max_connections of 0 or less rather than reading 0 as the default", func() {
		err := parse(strings.Replace(withQAT, "stack: {kind: lstack, cores: [1]}", "stack: {kind: lstack, cores: [1], max_connections: 0}", 1))
		Expect(err).To(MatchError(ContainSubstring(`key "hosts.server.stack.max_connections": 0 admits no connection`)))
		err = parse(strings.Replace(withQAT, "stack: {kind: lstack, cores: [1]}", "stack: {kind: lstack, cores: [1], max_connections: -5}", 1))
		Expect(err).To(MatchError(ContainSubstring(`key "hosts.server.stack.max_connections": -5 admits no connection`)))
		Expect(parse(strings.Replace(withQAT, "stack: {kind: lstack, cores: [1]}", "stack: {kind: lstack, cores: [1], max_connections: 3}", 1))).To(Succeed())
	})

	It("refuses a duration of 0 that a variant sets, naming the variant's key", func() {
		err := parse(withQAT + "variants:\n  short: {duration: 0s}\n")
		Expect(err).To(MatchError(ContainSubstring(`variant short: t.yaml:25:11: key "duration": a measured phase of 0s`)))
	})

	DescribeTable("refuses QAT faults the device would refuse at run time",
		func(event, want string) {
			Expect(parse(withQAT + "events:\n  - " + event + "\n")).To(MatchError(ContainSubstring(want)))
		},
		Entry("a rate above 1", "{at: 1ms, qat_fault: {host: server, device: 0, kind: engine_error, rate: 1.5}}",
			`t.yaml:25:72: key "events[0].qat_fault.rate": 1.5 is not a share between 0 and 1`),
		Entry("a negative rate", "{at: 1ms, qat_fault: {host: server, device: 0, kind: engine_error, rate: -0.1}}",
			`key "events[0].qat_fault.rate": -0.1 is not a share between 0 and 1`),
		Entry("engine_error without a rate", "{at: 1ms, qat_fault: {host: server, device: 0, kind: engine_error}}",
			`t.yaml:25:15: key "events[0].qat_fault.rate": engine_error needs a rate (the share of requests that fail, 0..1)`),
		Entry("an unknown kind", "{at: 1ms, qat_fault: {host: server, device: 0, kind: meltdown}}",
			`key "events[0].qat_fault.kind": kind: "meltdown" is not one of`),
		Entry("a negative for", "{at: 1ms, qat_fault: {host: server, device: 0, kind: reset, for: -1ms}}",
			`key "events[0].qat_fault.for": -1ms is negative`),
		Entry("a negative device", "{at: 1ms, qat_clear: {host: server, device: -1, kind: reset}}",
			`key "events[0].qat_clear.device": device -1`),
	)

	It("refuses an event after the variant's end (warm-up plus duration)", func() {
		Expect(parse(withQAT + "events:\n  - {at: 12ms, link_down: server.eth0}\n")).To(Succeed())
		err := parse(withQAT + "events:\n  - {at: 12001us, link_down: server.eth0}\n")
		Expect(err).To(MatchError(`t.yaml:25:6: key "events[0].at": 12.001ms is after the end of the run (12ms: warmup 2ms + duration 10ms); it would never happen`))
		err = parse(withQAT + "events:\n  - {at: 11ms, link_down: server.eth0}\nvariants:\n  short: {duration: 5ms}\n  long: {}\n")
		Expect(err).To(MatchError(ContainSubstring(`variant short: t.yaml:25:6: key "events[0].at": 11ms is after the end of the run (7ms: warmup 2ms + duration 5ms)`)))
	})

	It("refuses a load generator's target that no host owns", func() {
		err := parse(strings.Replace(withQAT, "target: 10.0.0.1:6379", "target: 10.0.0.9:6379", 1))
		Expect(err).To(MatchError(`t.yaml:21:33: key "hosts.client.apps[0].target": no NIC has the address 10.0.0.9 (addresses: 10.0.0.2 on client.eth0, 10.0.0.1 on server.eth0)`))
	})

	It("refuses the same address on two NICs", func() {
		err := parse(strings.Replace(withQAT, "ip: 10.0.0.2/24", "ip: 10.0.0.1/24", 1))
		Expect(err).To(MatchError(`t.yaml:9:41: key "hosts.server.nics[0].ip": address 10.0.0.1 is also on client.eth0 (hosts.client.nics[0].ip); each NIC needs its own`))
	})

	It("refuses spans over the limit, at their key (issue 17, finding 9)", func() {
		err := parse(strings.Replace(withQAT, "duration: 10ms", "duration: 2000000h", 1))
		Expect(err).To(MatchError(HavePrefix(`t.yaml:3:1: key "duration": 2000000h0m0s, over the limit of 1h0m0s`)))
		err = parse(strings.Replace(withQAT, "warmup: 2ms", "warmup: 3601s", 1))
		Expect(err).To(MatchError(HavePrefix(`t.yaml:4:1: key "warmup": 1h0m1s, over the limit of 1h0m0s`)))
		err = parse(withQAT + "variants:\n  long: {duration: 1000h}\n")
		Expect(err).To(MatchError(HavePrefix(`variant long: t.yaml:25:10: key "duration": 1000h0m0s, over the limit of 1h0m0s`)))
	})
})
