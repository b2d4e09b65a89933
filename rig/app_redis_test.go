package rig_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig"
)

// redisShape is gazelle-redis's shape, small: a 4-core server running
// Redis's one thread, and a client host whose stack kind, NIC model and
// client count vary (%[1]s, %[2]s, %[3]d).
const redisShape = `
version: 1
name: redis-shape
seed: 7
duration: 120ms
warmup: 0s
hosts:
  server:
    machine: kunpeng920-4826-2p
    nics:
      - {name: eth0, model: %[2]s, numa_node: 0, ip: 10.0.0.1/24, rx_queues: 4, tx_queues: 4,
         rx_offloads: [ipv4_cksum, tcp_cksum], tx_offloads: [ipv4_cksum, tcp_cksum]}
    stack: {kind: lstack, cores: [8, 9, 10, 11]}
    apps:
      - {kind: redis-server, port: 6379}
  client:
    machine: kunpeng920-4826-2p
    nics:
      - {name: eth0, model: %[2]s, numa_node: 0, ip: 10.0.0.2/24,
         rx_offloads: [ipv4_cksum, tcp_cksum], tx_offloads: [ipv4_cksum, tcp_cksum]}
    stack: {kind: %[1]s, cores: [8]}
    apps:
      - {kind: redis-benchmark, target: "10.0.0.1:6379", clients: %[3]d, requests: 6000, commands: [SET, GET]}
links:
  - ends: [server.eth0, client.eth0]
    latency: 10us
variants:
  default: {}
`

// redisRun runs redisShape and returns its figures by path, a figure the
// report leaves out (a layer that charged nothing) being 0.
func redisRun(clientStack, nicModel string, clients int) func(string) float64 {
	r := runScenario(fromText("redis-shape.yaml", fmt.Sprintf(redisShape, clientStack, nicModel, clients)))
	t := r.Figures["default"]
	return func(path string) float64 {
		v, ok := t.Lookup(strings.Split(path, "."))
		if !ok {
			return 0
		}
		f, ok := v.(float64)
		Expect(ok).To(BeTrue(), "%s is not a figure", path)
		return f
	}
}

var _ = Describe("redis-server and redis-benchmark at the article's shape", func() {
	It("serves every connection from one Redis thread on a core of its own, charging SET and GET their own procedures", func() {
		f := redisRun("kernel", "hi1822-25g", 200)
		Expect(f("redis_benchmark.finished")).To(Equal(1.0))
		Expect(f("redis_server.threads")).To(Equal(1.0))
		Expect(f("redis_server.epoll.accepted")).To(Equal(200.0))
		// The thread runs on CPU 0 (the first of the NIC's node that is
		// not a stack core) and nowhere else: the stack lcores run no
		// Redis work, only their bridges.
		Expect(f("server.cpu.0.layers.redis_server.ns")).To(BeNumerically(">", 0))
		for _, lcore := range []string{"8", "9", "10", "11"} {
			Expect(f("server.cpu."+lcore+".layers.redis_server.ns")).To(BeZero(), "CPU "+lcore)
		}
		// Connections spread over the four instances reach the one thread.
		for i := 0; i < 4; i++ {
			Expect(f(fmt.Sprintf("redis_server.instance.%d.accepted", i))).To(BeNumerically(">", 0))
		}
		// Each command pays its own procedure: SET and GET are
		// different operations, counted once per command.
		set, get := f("server.cpu.0.ops.redis_cmd_set.count"), f("server.cpu.0.ops.redis_cmd_get.count")
		Expect(set).To(BeNumerically(">=", 6000))
		Expect(get).To(BeNumerically(">=", 6000))
		Expect(set + get).To(Equal(f("server.cpu.0.ops.resp_command.count") - f("server.cpu.0.ops.redis_cmd_other.count")))
		Expect(f("server.cpu.0.ops.redis_cmd_set.ns") / set).NotTo(Equal(f("server.cpu.0.ops.redis_cmd_get.ns") / get))
	})

	It("lets the client's one core be the bottleneck: redis-benchmark on the kernel stack saturates it before Redis's thread", func() {
		f := redisRun("kernel", "hi1822-25g", 1000)
		Expect(f("redis_benchmark.finished")).To(Equal(1.0))
		Expect(f("client.cpu.all.during.redis_benchmark.busy_pct")).To(BeNumerically(">", 95))
		// Redis's thread, on CPU 0, has time to spare.
		Expect(f("server.cpu.0.busy_ns") / f("sim.seconds") / 1e9).To(BeNumerically("<", 0.6))
	})

	It("drops nothing at the driver's default ring on the kernel path with 1000 clients on one core", func() {
		// x710's default rx ring is 512 descriptors: a burst of a
		// thousand replies overflows it unless the kernel's NAPI drains
		// it into socket queues.
		f := redisRun("kernel", "x710-10g", 1000)
		Expect(f("client.nic.eth0.imissed")).To(BeZero())
		Expect(f("client.nic.eth0.rx_nombuf")).To(BeZero())
		Expect(f("redis_benchmark.finished")).To(Equal(1.0))
		Expect(f("client.nic.eth0.xstats.rx_q0_backlog_peak")).To(BeNumerically(">", 512), "the burst waited beyond the ring")
	})
})

var _ = Describe("redis-server's keys", func() {
	It("runs Gazelle's IO-multiplexing model with placement: lcore, one event loop per stack lcore", func() {
		r := runScenario(fromText("redis-shape.yaml", fmt.Sprintf(redisShape, "lstack", "hi1822-25g", 50),
			"{kind: redis-server, port: 6379}", "{kind: redis-server, port: 6379, placement: lcore}"))
		t := r.Figures["default"]
		Expect(figure(t, "redis_server.threads")).To(Equal(4.0))
		Expect(figure(t, "server.cpu.8.layers.redis_server.ns")).To(BeNumerically(">", 0))
		Expect(figure(t, "redis_server.total.commands")).To(BeNumerically(">=", 12000))
	})

	DescribeTable("refuses what it does not model, naming the key",
		func(app, key string) {
			text := strings.Replace(fmt.Sprintf(redisShape, "lstack", "hi1822-25g", 10), "{kind: redis-server, port: 6379}", app, 1)
			s := fromText("redis-shape.yaml", text)
			_, err := rig.Run(s, rig.Options{})
			Expect(err).To(MatchError(ContainSubstring(key)))
		},
		Entry("io-threads", "{kind: redis-server, port: 6379, threads: 4}", "threads"),
		Entry("a stack core", "{kind: redis-server, port: 6379, cores: [8]}", "cores[0]"),
		Entry("an unknown placement", "{kind: redis-server, port: 6379, placement: numa}", "placement"),
	)
})
