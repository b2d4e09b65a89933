package rig_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/report"
)

// multiApps is a server host running redis-server and http on the same
// stack, and a client host running redis-benchmark and wrk at once on
// its one stack core: each app must see its own sockets' events.
const multiApps = `
version: 1
name: multi-apps
seed: 3
duration: 60ms
warmup: 0s
hosts:
  server:
    machine: xeon-e5-2650v2-2p
    nics:
      - {name: eth0, model: x710-10g, numa_node: 0, ip: 10.0.0.1/24, rx_queues: 2, tx_queues: 2,
         rx_offloads: [ipv4_cksum, tcp_cksum], tx_offloads: [ipv4_cksum, tcp_cksum]}
    stack: {kind: lstack, cores: [2, 3]}
    apps:
      - {kind: redis-server, port: 6379}
      - {kind: http, port: 80, request_cpu: 5us, pages: [2048]}
  client:
    machine: xeon-e5-2650v2-2p
    nics:
      - {name: eth0, model: x710-10g, numa_node: 0, ip: 10.0.0.2/24,
         rx_offloads: [ipv4_cksum, tcp_cksum], tx_offloads: [ipv4_cksum, tcp_cksum]}
    stack: {kind: lstack, cores: [2], neighbors: warm}
    apps:
      - {kind: redis-benchmark, target: "10.0.0.1:6379", clients: 20, requests: 1000000, commands: [SET, GET], pipeline: 2}
      - {kind: wrk, target: "10.0.0.1:80", connections: 10, paths: ["/0"], gzip: false}
links:
  - ends: [server.eth0, client.eth0]
    latency: 10us
variants:
  default: {}
`

// figure reads one figure of the variant, failing the spec when it does
// not exist.
func figure(t report.Tree, path string) float64 {
	v, ok := t.Lookup(strings.Split(path, "."))
	ExpectWithOffset(1, ok).To(BeTrue(), "no figure %s", path)
	f, ok := v.(float64)
	ExpectWithOffset(1, ok).To(BeTrue(), "%s is not a figure", path)
	return f
}

var _ = Describe("several apps on one host", func() {
	It("gives redis-benchmark and wrk their own events, and the servers count what the clients got", func() {
		r := runScenario(fromText("multi-apps.yaml", multiApps))
		t := r.Figures["default"]

		// wrk's 10 connections have one request each in flight at most,
		// redis-benchmark's 20 clients two.
		Expect(figure(t, "wrk.requests")).To(BeNumerically(">", 100))
		conserved("wrk", figure(t, "http.server.requests"), figure(t, "wrk.requests"), figure(t, "wrk.outstanding"), 10)
		conserved("redis-benchmark", figure(t, "redis_server.total.commands"), figure(t, "redis_benchmark.requests"),
			figure(t, "redis_benchmark.outstanding"), 20*2)
		Expect(figure(t, "redis_benchmark.SET.requests")).To(BeNumerically(">", 100))
		Expect(figure(t, "redis_benchmark.errors") + figure(t, "wrk.socket_errors")).To(BeZero())
	})
})

// twoGenerators is a client host running two redis-benchmarks against
// one server port: the host hands out each local port once, so their
// connections' 4-tuples differ.
const twoGenerators = `
version: 1
name: two-generators
seed: 3
duration: 40ms
warmup: 0s
hosts:
  server:
    machine: xeon-e5-2650v2-2p
    nics:
      - {name: eth0, model: x710-10g, numa_node: 0, ip: 10.0.0.1/24,
         rx_offloads: [ipv4_cksum, tcp_cksum], tx_offloads: [ipv4_cksum, tcp_cksum]}
    stack: {kind: lstack, cores: [2]}
    apps:
      - {kind: redis-server, port: 6379}
  client:
    machine: xeon-e5-2650v2-2p
    nics:
      - {name: eth0, model: x710-10g, numa_node: 0, ip: 10.0.0.2/24,
         rx_offloads: [ipv4_cksum, tcp_cksum], tx_offloads: [ipv4_cksum, tcp_cksum]}
    stack: {kind: lstack, cores: [2], neighbors: warm}
    apps:
      - {kind: redis-benchmark, target: "10.0.0.1:6379", clients: 30, requests: 1000000, commands: [GET]}
      - {name: second, kind: redis-benchmark, target: "10.0.0.1:6379", clients: 30, requests: 1000000, commands: [GET]}
links:
  - ends: [server.eth0, client.eth0]
    latency: 10us
variants:
  default: {}
`

var _ = Describe("two load generators on one host", func() {
	It("connects every client of both to one server port, none failing on a port the other took", func() {
		t := runScenario(fromText("two-generators.yaml", twoGenerators)).Figures["default"]
		for _, g := range []string{"redis_benchmark", "second"} {
			Expect(figure(t, g+".connected")).To(Equal(30.0), g)
			Expect(figure(t, g+".connect_failures")).To(BeZero(), g)
			Expect(figure(t, g+".requests")).To(BeNumerically(">", 100), g)
		}
		Expect(figure(t, "redis_server.epoll.accepted")).To(Equal(60.0))
	})

	It("serves both when each is a thread on a CPU of its own, bridged to the one stack core", func() {
		threads := strings.Replace(twoGenerators, "commands: [GET]}", "commands: [GET], cores: [4]}", 1)
		threads = strings.Replace(threads, "commands: [GET]}", "commands: [GET], cores: [5]}", 1)
		Expect(threads).To(ContainSubstring("cores: [5]"))
		t := runScenario(fromText("two-thread-generators.yaml", threads)).Figures["default"]
		for _, g := range []string{"redis_benchmark", "second"} {
			Expect(figure(t, g+".connected")).To(Equal(30.0), g)
			Expect(figure(t, g+".requests")).To(BeNumerically(">", 100), g)
		}
	})
})
