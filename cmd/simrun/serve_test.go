//go:build !dpdk

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/kv"
	"github.com/savanna-sim/savanna/internal/control"
	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/stack/tcp"
)

var _ = Describe("simrun serve --backend", func() {
	serveArgs := func(extra ...string) []string {
		return append([]string{"serve", "--ip", "10.78.0.2/24", "--app", "kv", "--port", "6379"}, extra...)
	}

	It("answers --backend dpdk in a build without the tag with the error naming the tag", func() {
		code, _, errOut := simrun(serveArgs("--backend", "dpdk", "--eal", "--no-huge -m 256 --no-pci --no-shconf -l 0-1 --vdev=net_tap0,iface=svd0")...)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("savanna was built without -tags dpdk; rebuild with go build -tags dpdk (needs libdpdk-dev)"))
	})

	DescribeTable("refuses what it cannot run, naming the flag",
		func(want string, extra ...string) {
			code, _, errOut := simrun(serveArgs(extra...)...)
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring(want))
		},
		Entry("dpdk without EAL arguments", "--eal is required with --backend dpdk", "--backend", "dpdk"),
		Entry("tap without an interface", "--tap is required with --backend tap"),
		Entry("the simulation, which is not live", "--backend sim: serve runs in real time", "--backend", "sim"),
		Entry("an unknown backend", `--backend "fpga": want tap or dpdk`, "--backend", "fpga"),
		Entry("a negative park", "--max-park -1s: must not be negative", "--tap", "x", "--max-park", "-1s"),
		Entry("an unknown log level", `--log-level: "loud": want debug, info, warn or error`, "--tap", "x", "--log-level", "loud"),
		Entry("a metrics address without a port", `--metrics "localhost": want HOST:PORT such as 127.0.0.1:9464`, "--tap", "x", "--metrics", "localhost"),
	)
})

var _ = Describe("simrun serve's limits", func() {
	parse := func(extra ...string) (serveConfig, string, bool) {
		var errOut strings.Builder
		c, _, ok := parseServeFlags(append([]string{"--tap", "x", "--ip", "10.78.0.2/24", "--app", "kv", "--port", "6379"}, extra...), &errOut)
		return c, errOut.String(), ok
	}

	It("splits --memory-limit 1GiB: maxmemory 384 MiB, tcp_mem 192, 256, 320 MiB", func() {
		c, errOut, ok := parse("--memory-limit", "1GiB")
		Expect(ok).To(BeTrue(), errOut)
		Expect(c.lim.memoryLimit).To(BeEquivalentTo(1 << 30))
		Expect(c.lim.kv.MaxMemory).To(BeEquivalentTo(384 << 20))
		Expect(c.lim.tcpMem).To(Equal(tcp.MemLimits{Low: 192 << 20, Pressure: 256 << 20, High: 320 << 20}))
	})

	It("sets Go's soft memory limit below the budget, leaving 1/8 for what Go does not count", func() {
		// At the whole budget, serve under hw/tap's hardening spec
		// peaked at VmHWM 1038 MiB for --memory-limit 1GiB, and at
		// 15/16 of it at 991 MiB.
		Expect(goMemoryLimit(1 << 30)).To(BeEquivalentTo(896 << 20))
	})

	It("leaves the defaults alone without limit flags", func() {
		c, errOut, ok := parse()
		Expect(ok).To(BeTrue(), errOut)
		Expect(c.lim).To(Equal(serveLimits{}))
		tcfg := tcp.DefaultConfig()
		c.lim.apply(&tcfg)
		Expect(tcfg).To(Equal(tcp.DefaultConfig()))
		e := c.lim.effective("kv", tcfg, math.MaxInt64)
		Expect(e.line()).To(Equal("limits: memory_limit=none go_memory_limit=none maxmemory=1GiB maxclients=10000 timeout=5m0s " +
			"proto_max_bulk_len=512MiB client_query_buffer_limit=1GiB client_output_buffer_limit=1GiB/64MiB/1m0s " +
			"tcp_mem=1536MiB,2GiB,3GiB max_conns=20000 conn_limit_action=rst"))
	})

	It("lets every knob override the split, in Redis's syntax", func() {
		c, errOut, ok := parse("--memory-limit", "1GiB", "--maxmemory", "256mb", "--maxclients", "3000", "--timeout", "10",
			"--proto-max-bulk-len", "1mb", "--client-query-buffer-limit", "2mb", "--client-output-buffer-limit", "8mb 2mb 5",
			"--tcp-mem", "100MiB,200MiB,300MiB", "--max-conns", "4000", "--conn-limit-action", "drop")
		Expect(ok).To(BeTrue(), errOut)
		Expect(c.lim.kv).To(Equal(kv.Limits{MaxMemory: 256 << 20, MaxClients: 3000, Timeout: 10 * time.Second,
			MaxBulk: 1 << 20, QueryBufferLimit: 2 << 20, OutputBufferHard: 8 << 20, OutputBufferSoft: 2 << 20,
			OutputBufferSoftTime: 5 * time.Second}))
		tcfg := tcp.DefaultConfig()
		c.lim.apply(&tcfg)
		Expect(tcfg.Mem).To(Equal(tcp.MemLimits{Low: 100 << 20, Pressure: 200 << 20, High: 300 << 20}))
		Expect(tcfg.MaxConns).To(Equal(4000))
		Expect(tcfg.ConnLimitAction).To(Equal("drop"))
		Expect(c.lim.effective("kv", tcfg, 1<<30).line()).To(Equal("limits: memory_limit=1GiB go_memory_limit=1GiB maxmemory=256MiB " +
			"maxclients=3000 timeout=10s proto_max_bulk_len=1MiB client_query_buffer_limit=2MiB client_output_buffer_limit=8MiB/2MiB/5s " +
			"tcp_mem=100MiB,200MiB,300MiB max_conns=4000 conn_limit_action=drop"))
	})

	DescribeTable("reads sizes as redis.conf and with binary units",
		func(in string, want int64) {
			Expect(parseServeSize(in)).To(Equal(want))
		},
		Entry("bytes", "4096", int64(4096)),
		Entry("Redis's k is decimal", "1k", int64(1000)),
		Entry("Redis's kb is binary", "1kb", int64(1024)),
		Entry("Redis's mb", "512mb", int64(512<<20)),
		Entry("Redis's gb, any case", "1GB", int64(1<<30)),
		Entry("MiB", "512MiB", int64(512<<20)),
		Entry("GiB", "1GiB", int64(1<<30)),
		Entry("Redis's g is decimal", "2g", int64(2e9)),
	)

	DescribeTable("reads Redis's timeout and Go durations; 0 is never",
		func(in string, want time.Duration) {
			Expect(parseServeTimeout(in)).To(Equal(want))
		},
		Entry("seconds", "300", 300*time.Second),
		Entry("a duration", "1m30s", 90*time.Second),
		Entry("0, never", "0", time.Duration(-1)),
	)

	It("reads Redis's 0 as no output limit, with or without the class", func() {
		h, s, t, err := parseOutputBufferLimit("normal 0 0 0")
		Expect(err).NotTo(HaveOccurred())
		Expect([]int64{h, s}).To(Equal([]int64{-1, -1}))
		Expect(t).To(BeNumerically(">", 0))
	})

	DescribeTable("refuses every bad limit with exit 2, naming the flag",
		func(want string, extra ...string) {
			code, _, errOut := simrun(append([]string{"serve", "--tap", "x", "--ip", "10.78.0.2/24", "--app", "kv", "--port", "6379"}, extra...)...)
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring(want))
		},
		Entry("a size without a number", `--memory-limit: size "GiB": want a whole number of bytes`, "--memory-limit", "GiB"),
		Entry("an unknown unit", `--memory-limit: size "1PB": unknown unit "PB"`, "--memory-limit", "1PB"),
		Entry("a budget too small to split", `--memory-limit "1MiB": below the least allowed, 67108864 bytes`, "--memory-limit", "1MiB"),
		Entry("an overflowing size", `--maxmemory: size "99999999999gb": too large`, "--maxmemory", "99999999999gb"),
		Entry("maxmemory below 1 MiB", `--maxmemory "1kb": below the least allowed, 1048576 bytes`, "--maxmemory", "1kb"),
		Entry("overrides that leave the runtime nothing", "--memory-limit 1GiB: kv's maxmemory (900MiB) and tcp_mem's high (320MiB) leave less than 1/4 of it to the runtime",
			"--memory-limit", "1GiB", "--maxmemory", "900mb"),
		Entry("no maxmemory under a budget", "--maxmemory none: --memory-limit 1GiB needs kv's maxmemory bounded", "--memory-limit", "1GiB", "--maxmemory", "none"),
		Entry("zero clients", `--maxclients "0": want a whole number from 1 to 1048576`, "--maxclients", "0"),
		Entry("words for clients", `--maxclients "many"`, "--maxclients", "many"),
		Entry("a negative timeout", `--timeout "-5s": must not be negative`, "--timeout", "-5s"),
		Entry("a timeout of words", `--timeout "soon": want seconds`, "--timeout", "soon"),
		Entry("a bulk over 1 GiB", `--proto-max-bulk-len "2gb": above 1 GiB`, "--proto-max-bulk-len", "2gb"),
		Entry("a query buffer below Redis's minimum", `--client-query-buffer-limit "1kb": below the least allowed, 1048576 bytes`, "--client-query-buffer-limit", "1kb"),
		Entry("an output limit of two fields", `--client-output-buffer-limit "8mb 2mb": want "HARD SOFT SECONDS"`, "--client-output-buffer-limit", "8mb 2mb"),
		Entry("an output limit's soft above its hard", `the soft limit exceeds the hard one`, "--client-output-buffer-limit", "1mb 8mb 5"),
		Entry("an output limit's seconds of words", `--client-output-buffer-limit seconds "x"`, "--client-output-buffer-limit", "8mb 2mb x"),
		Entry("an output hard limit below kv's batch", "kv limits: output_buffer_hard", "--client-output-buffer-limit", "1kb 0 0"),
		Entry("tcp_mem of two values", `--tcp-mem "1mb,2mb": want LOW,PRESSURE,HIGH`, "--tcp-mem", "1mb,2mb"),
		Entry("tcp_mem out of order", `--tcp-mem "3mb,2mb,1mb": want LOW <= PRESSURE <= HIGH`, "--tcp-mem", "3mb,2mb,1mb"),
		Entry("tcp_mem of words", `--tcp-mem: size "lots"`, "--tcp-mem", "1mb,lots,3mb"),
		Entry("zero connections", `--max-conns "0": want a whole number from 1`, "--max-conns", "0"),
		Entry("an unknown conn-limit action", `--conn-limit-action "reject": want rst or drop`, "--conn-limit-action", "reject"),
	)
})

// liveServe starts simrun serve --app kv on a TAP in a namespace of its
// own, as hw/tap's live specs do, with the extra flags, and gives the
// kernel side 10.77.0.1; it skips unless root with ip netns, /dev/net/tun
// and the programs named in need.
func liveServe(extra []string, need ...string) *livetest.Serve {
	if os.Geteuid() != 0 {
		Skip("live specs need root (network namespaces, TAP)")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		Skip("live specs need /dev/net/tun")
	}
	for _, p := range append([]string{"ip"}, need...) {
		if _, err := exec.LookPath(p); err != nil {
			Skip(fmt.Sprintf("live spec needs %s (.ci/run installs it)", p))
		}
	}
	liveOnce.Do(func() { liveBin, _, liveErr = livetest.BuildSimrun("SAVANNA_SIMRUN") })
	Expect(liveErr).NotTo(HaveOccurred())
	liveSeq++
	s := livetest.StartServeInNamespace(fmt.Sprintf("svw-%d-%d", os.Getpid(), liveSeq), liveBin, 20*time.Second,
		append([]string{"--tap", "sv0", "--ip", "10.77.0.2/24", "--app", "kv", "--port", "6379"}, extra...)...)
	out, err := s.Exec(10*time.Second, "ip", "addr", "add", "10.77.0.1/24", "dev", "sv0")
	Expect(err).NotTo(HaveOccurred(), out)
	return s
}

var (
	liveOnce sync.Once
	liveBin  string
	liveErr  error
	liveSeq  int
)

// shortTempDir is a temporary folder with a path short enough for a Unix
// socket.
func shortTempDir() string {
	d, err := os.MkdirTemp("", "svw")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, d)
	return d
}

var _ = Describe("watching simrun serve live", Label("live", "slow"), func() {
	It("is scraped by a real Prometheus during redis-benchmark: the commands counter rises, and promtool accepts /metrics", func() {
		s := liveServe([]string{"--metrics", "127.0.0.1:9464", "--ctl", "none"}, "redis-benchmark", "prometheus", "promtool")
		dir := shortTempDir()
		prom, err := livetest.StartPrometheus(s.NS, dir, "127.0.0.1:9090", "127.0.0.1:9464", 3*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_ = prom.Stop()
			GinkgoWriter.Printf("prometheus output:\n%s", prom.Output())
		})
		const q = "savanna_kv_commands_total"
		query := func() float64 {
			v, ok, err := prom.Query(q)
			Expect(err).NotTo(HaveOccurred())
			if !ok {
				return -1
			}
			return v
		}

		bench, err := livetest.StartInNetns(s.NS, 2*time.Minute, "redis-benchmark", "-h", "10.77.0.2", "-p", "6379",
			"-t", "set,get", "-n", "20000", "-c", "10", "-q")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(bench.Stop)
		var first float64
		Eventually(func() float64 { first = query(); return first }).WithTimeout(60*time.Second).WithPolling(250*time.Millisecond).
			Should(BeNumerically(">", 0), "Prometheus scraped a command count")
		Expect(bench.Wait()).To(Succeed(), bench.Output())
		// A second bounded run, so that the counter has more to count
		// however far the first had got when Prometheus first saw it.
		out, err := s.Exec(2*time.Minute, "redis-benchmark", "-h", "10.77.0.2", "-p", "6379", "-t", "ping", "-n", "2000", "-c", "2", "-q")
		Expect(err).NotTo(HaveOccurred(), out)
		var second float64
		Eventually(func() float64 { second = query(); return second }).WithTimeout(60*time.Second).WithPolling(250*time.Millisecond).
			Should(BeNumerically(">=", 2*20000+2*2000), "both runs scraped")
		Expect(second).To(BeNumerically(">", first))
		AddReportEntry("savanna_kv_commands_total through Prometheus' query API", fmt.Sprintf("%v, then %v", first, second))

		up, ok, err := prom.Query(`up{job="savanna"}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(up).To(BeEquivalentTo(1), "the target is up")

		body, err := livetest.HTTPGetInNetns(s.NS, "http://127.0.0.1:9464/metrics", 10*time.Second)
		Expect(err).NotTo(HaveOccurred())
		Expect(body).To(MatchRegexp(`(?m)^process_resident_memory_bytes \S+$`))
		check := exec.Command("promtool", "check", "metrics")
		check.Stdin = strings.NewReader(body)
		res, err := check.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "promtool check metrics: %s", res)
		Expect(strings.TrimSpace(string(res))).To(BeEmpty(), "promtool's lint problems")
	})

	It("lists ten kernel connections held open with simrun ctl show --conn --json", func() {
		sock := filepath.Join(shortTempDir(), "serve.sock")
		s := liveServe([]string{"--ctl", sock})
		var locals []string
		for i := 0; i < 10; i++ {
			c, err := livetest.DialInNetns(s.NS, "10.77.0.2:6379", 20*time.Second)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(c.Close)
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			_, err = c.Write([]byte("PING\r\n"))
			Expect(err).NotTo(HaveOccurred())
			buf := make([]byte, 7)
			_, err = io.ReadFull(c, buf)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(buf)).To(Equal("+PONG\r\n"))
			locals = append(locals, c.LocalAddr().String())
		}
		out, err := livetest.Run(20*time.Second, liveBin, "ctl", "--socket", sock, "show", "--conn", "--json")
		Expect(err).NotTo(HaveOccurred(), out)
		var got control.Sockets
		Expect(json.Unmarshal([]byte(out), &got)).To(Succeed(), out)
		var remotes []string
		for _, x := range got.Sockets {
			if x.State == "ESTABLISHED" {
				Expect(x.Local).To(Equal("10.77.0.2:6379"))
				Expect(x.SRTTNanos).To(BeNumerically(">", 0), "the PONG was acknowledged")
				Expect(x.Cwnd).To(BeNumerically(">", 0))
				remotes = append(remotes, x.Remote)
			}
		}
		Expect(remotes).To(ConsistOf(locals))
		Expect(got.Sockets).To(ContainElement(HaveField("State", "LISTEN")))

		out, err = livetest.Run(20*time.Second, liveBin, "ctl", "--socket", sock, "show", "--conn")
		Expect(err).NotTo(HaveOccurred(), out)
		GinkgoWriter.Printf("simrun ctl show --conn:\n%s", out)
		Expect(out).To(ContainSubstring("11 sockets"))
	})
})
