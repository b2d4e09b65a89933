package rig_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig"
)

// redisOnly is a Redis server and a redis-benchmark on two hosts, small
// enough to run in well under a second; specs edit it.
const redisOnly = `
version: 1
name: redis-small
seed: 5
duration: 300ms
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
    stack: {kind: lstack, cores: [2]}
    apps:
      - {kind: redis-benchmark, target: "10.0.0.1:6379", clients: 50, requests: 1000000, commands: [SET, GET]}
links:
  - ends: [server.eth0, client.eth0]
    latency: 10us
variants:
  default: {}
`

// conserved checks that what a load generator got answered matches what
// its server served: the server may be ahead by the requests still in
// flight at the window's end (outstanding) and behind by those in flight
// at its start (at most inFlight, the generator's concurrency).
func conserved(what string, served, completed, outstanding, inFlight float64) {
	GinkgoWriter.Printf("%s: served %.0f, completed %.0f, outstanding %.0f\n", what, served, completed, outstanding)
	ExpectWithOffset(1, completed).To(BeNumerically(">", 0), what+": nothing completed")
	ExpectWithOffset(1, served-completed).To(BeNumerically("<=", outstanding), what+": served more than completed and in flight")
	ExpectWithOffset(1, completed-served).To(BeNumerically("<=", inFlight), what+": completed more than served")
	ExpectWithOffset(1, outstanding).To(BeNumerically("<=", inFlight))
}

var _ = Describe("unfinished work in the figures", func() {
	It("counts only the measured window in redis-benchmark and redis-server after a warm-up", func() {
		// 10,000 requests a test: SET ends in the warm-up, and both
		// tests fit in the window once they start again at its start.
		// One client thread (with two a test ends at a 250 ms tick), and
		// none of the file's expectations, which name the figures of two.
		text, _, found := strings.Cut(bundledText("gazelle-redis"), "\nexpect:\n")
		Expect(found).To(BeTrue())
		r := runScenario(fromText("gazelle-redis.yaml", text,
			"duration: 2500ms", "duration: 150ms",
			"warmup: 0s", "warmup: 20ms",
			"clients: 1000", "clients: 200",
			"requests: 100000", "requests: 10000",
			redisBenchThreads, redisBenchOneThread))
		for _, v := range []string{"kernel", "lstack"} {
			t := r.Figures[v]
			served := figure(t, "redis_server.total.commands")
			perCommand := figure(t, "redis_benchmark.SET.requests") + figure(t, "redis_benchmark.GET.requests")
			// The tests count what they sent in the window: never more
			// than the server ran in it.
			Expect(perCommand).To(BeNumerically("<=", served), v+": per-command requests count the warm-up")
			Expect(figure(t, "redis_benchmark.finished")).To(Equal(1.0), v)
			Expect(figure(t, "redis_benchmark.SET.requests")).To(Equal(10000.0), v)
			Expect(figure(t, "redis_benchmark.GET.requests")).To(Equal(10000.0), v)
			conserved(v+" redis", served, figure(t, "redis_benchmark.requests"), figure(t, "redis_benchmark.outstanding"), 200)
		}
	})

	It("counts only the measured window in wrk and http after a warm-up, requests in flight included", func() {
		r := runScenario(bundled("tengine-gzip-qat",
			"duration: 300ms", "duration: 40ms",
			"warmup: 250ms", "warmup: 20ms",
			"latency: 25ms", "latency: 20us",
			"connections: 1000, rate: 10000", "connections: 100, rate: 5000"))
		for _, v := range []string{"software", "qat"} {
			t := r.Figures[v]
			conserved(v+" http", figure(t, "http.server.requests"), figure(t, "wrk.requests"), figure(t, "wrk.outstanding"), 100)
			Expect(figure(t, "http.server.accepted")).To(BeZero(), v+": the connections opened in the warm-up")
		}
	})

	It("counts only the measured window in oltp-client after a warm-up, statements in flight included", func() {
		// The file's lstack variant alone, without its expectations.
		data, err := os.ReadFile(filepath.Join("..", "scenarios", "gazelle-mysql.yaml"))
		Expect(err).NotTo(HaveOccurred())
		text, _, _ := strings.Cut(string(data), "\nvariants:")
		r := runScenario(fromText("oltp-small.yaml", text+"\nvariants:\n  lstack: {}\n",
			"duration: 50ms", "duration: 15ms", "warmup: 20ms", "warmup: 10ms", "terminals: 300", "terminals: 32"))
		t := r.Figures["lstack"]
		conserved("oltp", figure(t, "oltp_server.queries"), figure(t, "oltp_client.statements"), figure(t, "oltp_client.outstanding"), 32)
	})

	It("keeps redis-benchmark sending while a client's SYN is lost", func() {
		r := runScenario(fromText("redis-lossy.yaml", redisOnly, "latency: 10us", "latency: 10us\n    loss: 0.02"))
		t := r.Figures["default"]
		Expect(figure(t, "redis_benchmark.SET.requests")).To(BeNumerically(">", 1000))
		Expect(figure(t, "redis_benchmark.connected")).To(BeNumerically("<", 50), "the seed loses a SYN: a client waits out the 1 s RTO")
		Expect(figure(t, "redis_benchmark.SET.rps")).To(BeNumerically(">", 0))
	})

	It("reports a test's figures while it runs, and finished only once it ends", func() {
		r := runScenario(fromText("redis-small.yaml", redisOnly, "duration: 300ms", "duration: 100ms"))
		t := r.Figures["default"]
		Expect(figure(t, "redis_benchmark.SET.finished")).To(BeZero())
		Expect(figure(t, "redis_benchmark.finished")).To(BeZero())
		Expect(figure(t, "redis_benchmark.SET.requests")).To(BeNumerically(">", 1000))
		Expect(figure(t, "redis_benchmark.SET.rps")).To(BeNumerically(">", 1000))
		Expect(figure(t, "redis_benchmark.SET.avg_ms")).To(BeNumerically(">", 0))
		Expect(figure(t, "redis_benchmark.SET.outstanding")).To(BeNumerically("<=", 50))
		Expect(figure(t, "redis_benchmark.GET.requests")).To(BeZero())
		Expect(figure(t, "redis_benchmark.GET.finished")).To(BeZero())
	})

	It("has every configured command's figures before the run (simrun validate)", func() {
		s := fromText("redis-small.yaml", redisOnly, "commands: [SET, GET]", "commands: [PING, SET, GET, INCR]")
		env, err := rig.Figures(s)
		Expect(err).NotTo(HaveOccurred())
		t := env["default"]
		for _, cmd := range []string{"PING", "SET", "GET", "INCR"} {
			for _, f := range []string{"requests", "rps", "avg_ms", "p50_ms", "p99_ms", "max_ms", "outstanding", "finished"} {
				Expect(figure(t, "redis_benchmark."+cmd+"."+f)).To(BeZero())
			}
		}
		for _, f := range []string{"requests", "outstanding", "finished", "connected"} {
			Expect(figure(t, "redis_benchmark."+f)).To(BeZero())
		}
	})
})
