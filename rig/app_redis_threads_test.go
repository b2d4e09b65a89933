package rig_test

import (
	"bytes"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/report"
)

// redisThreadsShape is a client-bound Redis shape: Redis as four event
// loops, one on each of the server's lstack lcores (so that the server
// has room), and redis-benchmark on a Linux client (a kernel stack, its
// interrupts on CPUs 8 and 9) with its bench line at %[1]s; the run
// lasts %[2]s.
const redisThreadsShape = `
version: 1
name: redis-threads
seed: 11
duration: %[2]s
warmup: 0s
hosts:
  server:
    machine: kunpeng920-4826-2p
    nics:
      - {name: eth0, model: hi1822-25g, numa_node: 0, ip: 10.0.0.1/24, rx_queues: 4, tx_queues: 4,
         rx_offloads: [ipv4_cksum, tcp_cksum], tx_offloads: [ipv4_cksum, tcp_cksum]}
    stack: {kind: lstack, cores: [8, 9, 10, 11]}
    apps:
      - {kind: redis-server, port: 6379, placement: lcore}
  client:
    machine: kunpeng920-4826-2p
    nics:
      - {name: eth0, model: hi1822-25g, numa_node: 0, ip: 10.0.0.2/24, rx_queues: 2, tx_queues: 2,
         rx_offloads: [ipv4_cksum, tcp_cksum], tx_offloads: [ipv4_cksum, tcp_cksum]}
    stack: {kind: kernel, cores: [8, 9]}
    apps:
      - {kind: redis-benchmark, target: "10.0.0.1:6379", commands: [SET, GET], %[1]s}
links:
  - ends: [server.eth0, client.eth0]
    latency: 10us
variants:
  default: {}
`

func redisThreadsRun(bench, duration string) report.Tree {
	return runScenario(fromText("redis-threads.yaml", fmt.Sprintf(redisThreadsShape, bench, duration))).Figures["default"]
}

// activeRPS is a test's throughput up to its last reply: its rps without
// the wait for the threads' throughput tick.
func activeRPS(t report.Tree, cmd string) float64 {
	n := figure(t, "redis_benchmark."+cmd+".requests")
	return n / (n/figure(t, "redis_benchmark."+cmd+".rps") - figure(t, "redis_benchmark."+cmd+".stop_wait_ms")/1e3)
}

var _ = Describe("redis-benchmark's threads: key", func() {
	It("runs each thread on its own CPU, sharing the clients and each test's request budget", func() {
		t := redisThreadsRun("clients: 201, requests: 6000, threads: 3, cores: [0, 1, 2]", "700ms")
		Expect(figure(t, "redis_benchmark.finished")).To(Equal(1.0))
		Expect(figure(t, "redis_benchmark.threads")).To(Equal(3.0))
		Expect(figure(t, "redis_benchmark.errors") + figure(t, "redis_benchmark.connect_failures")).To(BeZero())
		var requests, set, get, clients float64
		for i := 0; i < 3; i++ {
			th := fmt.Sprintf("redis_benchmark.thread.%d.", i)
			Expect(figure(t, th+"clients")).To(Equal(67.0))
			clients += figure(t, th+"clients")
			requests += figure(t, th+"requests")
			set += figure(t, th+"SET.requests")
			get += figure(t, th+"GET.requests")
			// The thread's own work is on its own CPU ...
			cpu := fmt.Sprintf("client.cpu.%d.", i)
			Expect(figure(t, cpu+"ops.bench_request.count")).To(Equal(figure(t, th+"requests")), "CPU %d", i)
			Expect(figure(t, cpu+"ops.kernel_tcp_tx.count")).To(BeNumerically(">=", figure(t, th+"requests")), "CPU %d: its write()s' transmit path", i)
		}
		// ... and none on the interrupt CPUs.
		for _, cpu := range []string{"8", "9"} {
			_, ok := t.Lookup(strings.Split("client.cpu."+cpu+".layers.redis_benchmark", "."))
			Expect(ok).To(BeFalse(), "CPU "+cpu)
		}
		Expect(clients).To(Equal(201.0))
		Expect(requests).To(Equal(figure(t, "redis_benchmark.requests")))
		Expect(requests).To(Equal(12000.0))
		Expect(set).To(Equal(figure(t, "redis_benchmark.SET.requests")))
		Expect(get).To(Equal(figure(t, "redis_benchmark.GET.requests")))
		Expect(set).To(Equal(6000.0))
		// A test runs until its last thread's throughput tick, 250 ms
		// after its start: 6000 requests take less.
		Expect(figure(t, "redis_benchmark.SET.stop_wait_ms")).To(BeNumerically(">", 0))
		Expect(6000 / figure(t, "redis_benchmark.SET.rps")).To(BeNumerically("~", 0.25, 1e-3))
	})

	It("doubles a client-bound run's throughput with two threads", func() {
		one := redisThreadsRun("clients: 200, requests: 30000, threads: 1, cores: [0]", "700ms")
		two := redisThreadsRun("clients: 200, requests: 30000, threads: 2, cores: [0, 1]", "700ms")
		Expect(figure(one, "redis_benchmark.finished")).To(Equal(1.0))
		Expect(figure(two, "redis_benchmark.finished")).To(Equal(1.0))
		// One thread saturates its CPU.
		Expect(figure(one, "client.cpu.0.during.redis_benchmark.busy_pct")).To(BeNumerically(">", 95))
		for _, cmd := range []string{"SET", "GET"} {
			Expect(figure(two, "redis_benchmark."+cmd+".requests")).To(Equal(30000.0), cmd)
			ratio := activeRPS(two, cmd) / figure(one, "redis_benchmark."+cmd+".rps")
			Expect(ratio).To(BeNumerically(">", 1.8), cmd)
			Expect(ratio).To(BeNumerically("<", 2.1), cmd)
		}
	})

	It("runs thread i on stack core i without cores:", func() {
		t := redisThreadsRun("clients: 50, requests: 3000, threads: 2", "700ms")
		Expect(figure(t, "redis_benchmark.finished")).To(Equal(1.0))
		for i, cpu := range []string{"8", "9"} {
			th := fmt.Sprintf("redis_benchmark.thread.%d.", i)
			Expect(figure(t, th+"clients")).To(Equal(25.0))
			Expect(figure(t, "client.cpu."+cpu+".ops.bench_request.count")).To(Equal(figure(t, th+"requests")), "CPU "+cpu)
		}
	})

	It("gives the same report, byte for byte, for the same scenario and seed", func() {
		run := func() []byte {
			r, err := rig.Run(fromText("redis-threads.yaml", fmt.Sprintf(redisThreadsShape, "clients: 60, requests: 2000, threads: 2, cores: [0, 1]", "600ms")), rig.Options{})
			Expect(err).NotTo(HaveOccurred())
			var b bytes.Buffer
			Expect(r.WriteJSON(&b)).To(Succeed())
			return b.Bytes()
		}
		first := run()
		Expect(string(first)).To(ContainSubstring(`"thread"`))
		Expect(run()).To(Equal(first))
	})

	DescribeTable("refuses what it does not model, naming the key",
		func(bench, key, msg string) {
			_, err := rig.Run(fromText("redis-threads.yaml", fmt.Sprintf(redisThreadsShape, bench, "100ms")), rig.Options{})
			Expect(err).To(MatchError(ContainSubstring(key)))
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("fewer CPUs than threads", "threads: 4, cores: [0, 1]", "hosts.client.apps[0].cores", "threads: 4 but cores: lists 2 CPUs"),
		Entry("more CPUs than threads", "cores: [0, 1]", "hosts.client.apps[0].cores", "threads: 1 but cores: lists 2 CPUs"),
		Entry("a CPU twice", "threads: 2, cores: [0, 0]", "hosts.client.apps[0].cores[1]", "listed twice"),
		Entry("a stack core", "threads: 2, cores: [0, 8]", "hosts.client.apps[0].cores[1]", "stack core"),
		Entry("more threads than stack cores without cores:", "threads: 3", "hosts.client.apps[0].threads", "3 threads but the host's stack has 2 cores"),
		Entry("more than MAX_THREADS", "threads: 501", "hosts.client.apps[0].threads", "outside 1..500"),
		Entry("a negative count", "threads: -1", "hosts.client.apps[0].threads", "outside 1..500"),
	)
})
