package rig_test

import (
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig"
)

// silentServer is a redis-benchmark whose second connection meets a
// server that drops its SYN without a word (max_connections: 1 with
// conn_limit_action: drop, Gazelle's way), so the client's SYN
// retransmission shows in its figures. Variant defaults leaves the
// client's tunables out; no_syn_retries sets syn_retries: 0; refusing
// gives the server the default conn_limit_action, rst.
const silentServer = `
version: 1
name: silent-server
seed: 5
duration: 1500ms
warmup: 0s
hosts:
  server:
    machine: xeon-e5-2650v2-2p
    nics:
      - {name: eth0, model: x710-10g, numa_node: 0, ip: 10.0.0.1/24,
         rx_offloads: [ipv4_cksum, tcp_cksum], tx_offloads: [ipv4_cksum, tcp_cksum]}
    stack: {kind: lstack, cores: [2], max_connections: 1, tunables: {conn_limit_action: drop}}
    apps:
      - {kind: redis-server, port: 6379}
  client:
    machine: xeon-e5-2650v2-2p
    nics:
      - {name: eth0, model: x710-10g, numa_node: 0, ip: 10.0.0.2/24,
         rx_offloads: [ipv4_cksum, tcp_cksum], tx_offloads: [ipv4_cksum, tcp_cksum]}
    stack: {kind: lstack, cores: [2], neighbors: warm}
    apps:
      - {kind: redis-benchmark, target: "10.0.0.1:6379", clients: 2, requests: 100, commands: [PING]}
links:
  - ends: [server.eth0, client.eth0]
    latency: 10us
variants:
  defaults: {}
  no_syn_retries: {hosts.client.stack.tunables: {syn_retries: 0}}
  refusing: {hosts.server.stack.tunables: {conn_limit_action: rst}}
`

// runErr runs a scenario that must not run and returns its error.
func runErr(file, text string, edits ...string) error {
	_, err := rig.Run(fromText(file, text, edits...), rig.Options{})
	Expect(err).To(HaveOccurred())
	var inv *rig.InvalidError
	Expect(errors.As(err, &inv)).To(BeTrue(), "%v is not an invalid scenario", err)
	return err
}

// lineCol returns the 1-based line and column where needle starts in
// text.
func lineCol(text, needle string) (int, int) {
	i := strings.Index(text, needle)
	Expect(i).To(BeNumerically(">=", 0), "no %q in the text", needle)
	line := strings.Count(text[:i], "\n") + 1
	return line, i - strings.LastIndex(text[:i], "\n")
}

var _ = Describe("stack tunables", func() {
	It("takes syn_retries: 0 to the engine, and keeps the default when the key is absent", func() {
		r := runScenario(fromText("silent-server.yaml", silentServer))

		def := r.Figures["defaults"]
		// Linux's 6 retries: the SYN goes again at 1 s.
		Expect(figure(def, "server.stack.0.tcp.conn_limit_refused")).To(Equal(2.0))
		Expect(figure(def, "client.stack.0.tcp.retrans_segs")).To(Equal(1.0))
		Expect(figure(def, "client.stack.0.tcp.attempt_fails")).To(Equal(0.0))
		Expect(figure(def, "redis_benchmark.connect_failures")).To(Equal(0.0))

		zero := r.Figures["no_syn_retries"]
		// No retransmission: the connect fails at the first RTO.
		Expect(figure(zero, "server.stack.0.tcp.conn_limit_refused")).To(Equal(1.0))
		Expect(figure(zero, "client.stack.0.tcp.retrans_segs")).To(Equal(0.0))
		Expect(figure(zero, "client.stack.0.tcp.attempt_fails")).To(Equal(1.0))
		Expect(figure(zero, "redis_benchmark.connect_failures")).To(Equal(1.0))

		// conn_limit_action rst: the SYN past the limit is answered,
		// and the client's connect fails at once, without retrying.
		rst := r.Figures["refusing"]
		Expect(figure(rst, "server.stack.0.tcp.conn_limit_refused")).To(Equal(1.0))
		Expect(figure(rst, "server.stack.0.tcp.conn_limit_rsts")).To(Equal(1.0))
		Expect(figure(rst, "client.stack.0.tcp.retrans_segs")).To(Equal(0.0))
		Expect(figure(rst, "client.stack.0.tcp.attempt_fails")).To(Equal(1.0))
		Expect(figure(rst, "redis_benchmark.connect_failures")).To(Equal(1.0))
	})

	It("takes tcp_mem, invalid_ratelimit and rst_rate_limit to the engine, and refuses a tcp_mem that is not three ordered byte counts at its key", func() {
		text := strings.Replace(silentServer, "cores: [2], neighbors: warm}", "cores: [2], neighbors: warm,\n            tunables: {tcp_mem: [1000, 2000], invalid_ratelimit: 1s}}", 1)
		line, col := lineCol(text, "tcp_mem")
		err := runErr("silent-server.yaml", text)
		Expect(err.Error()).To(HavePrefix(fmt.Sprintf("silent-server.yaml:%d:%d", line, col) + `: key "hosts.client.stack.tunables.tcp_mem": 2 values given`))

		text = strings.Replace(silentServer, "cores: [2], neighbors: warm}", "cores: [2], neighbors: warm,\n            tunables: {tcp_mem: [3000, 2000, 4000]}}", 1)
		line, col = lineCol(text, "tcp_mem")
		err = runErr("silent-server.yaml", text)
		Expect(err.Error()).To(HavePrefix(fmt.Sprintf("silent-server.yaml:%d:%d", line, col) + `: key "hosts.client.stack.tunables.tcp_mem": tcp config: tcp_mem: [3000, 2000, 4000] must be`))

		text = strings.Replace(silentServer, "cores: [2], neighbors: warm}", "cores: [2], neighbors: warm,\n            tunables: {rst_rate_limit: -1}}", 1)
		line, col = lineCol(text, "rst_rate_limit")
		err = runErr("silent-server.yaml", text)
		Expect(err).To(MatchError(fmt.Sprintf("silent-server.yaml:%d:%d", line, col) + `: key "hosts.client.stack.tunables.rst_rate_limit": tcp config: rst_rate_limit: -1 must not be negative`))

		// A budget this small puts the client's stack under pressure at
		// its first bytes: the figures show it.
		text = strings.Replace(silentServer, "cores: [2], neighbors: warm}", "cores: [2], neighbors: warm,\n            tunables: {tcp_mem: [0, 0, 1000000]}}", 1)
		r := runScenario(fromText("silent-server.yaml", text))
		Expect(figure(r.Figures["defaults"], "client.stack.0.tcp.mem_pressure_entries")).To(BeNumerically(">=", 1))
		Expect(figure(r.Figures["defaults"], "server.stack.0.tcp.mem_pressure_entries")).To(Equal(0.0))
	})

	It("refuses an unknown or ill-typed tunable, naming file, line, column and key", func() {
		text := strings.Replace(silentServer, "cores: [2], neighbors: warm}", "cores: [2], neighbors: warm,\n            tunables: {syn_retries: 1, syn_retires: 0}}", 1)
		line, col := lineCol(text, "syn_retires")
		err := runErr("silent-server.yaml", text)
		Expect(err.Error()).To(HavePrefix(fmt.Sprintf("silent-server.yaml:%d:%d", line, col) + `: key "hosts.client.stack.tunables.syn_retires": unknown key; expected one of: `))
		Expect(err.Error()).To(ContainSubstring("syn_retries"))

		text = strings.Replace(silentServer, "cores: [2], neighbors: warm}", "cores: [2], neighbors: warm,\n            tunables: {delayed_ack: 3}}", 1)
		line, col = lineCol(text, "3}}")
		err = runErr("silent-server.yaml", text)
		Expect(err).To(MatchError(fmt.Sprintf("silent-server.yaml:%d:%d", line, col) + `: key "hosts.client.stack.tunables.delayed_ack": expected true or false, found "3"`))
	})

	It("refuses a 0 that means nothing at its key, naming the valid range", func() {
		text := strings.Replace(silentServer, "cores: [2], neighbors: warm}", "cores: [2], neighbors: warm,\n            tunables: {send_buffer: 65536, initial_window: 0}}", 1)
		line, col := lineCol(text, "initial_window")
		err := runErr("silent-server.yaml", text)
		Expect(err).To(MatchError(fmt.Sprintf("silent-server.yaml:%d:%d", line, col) + `: key "hosts.client.stack.tunables.initial_window": tcp config: initial_window: 0 must be at least 1`))
	})
})
