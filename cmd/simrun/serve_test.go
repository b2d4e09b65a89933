//go:build !dpdk

package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/kv"
	"github.com/savanna-sim/savanna/internal/control"
	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
	"github.com/savanna-sim/savanna/stack/rt"
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
		Entry("an unknown backend", `--backend "fpga": want tap, dpdk or shm`, "--backend", "fpga"),
		Entry("a negative park", "--max-park -1s: must not be negative", "--tap", "x", "--max-park", "-1s"),
		Entry("an unknown log level", `--log-level: "loud": want debug, info, warn or error`, "--tap", "x", "--log-level", "loud"),
		Entry("a metrics address without a port", `--metrics "localhost": want HOST:PORT such as 127.0.0.1:9464`, "--tap", "x", "--metrics", "localhost"),
		Entry("a seed that is not a number", `--seed "abc": want an unsigned integer`, "--tap", "x", "--seed", "abc"),
	)

	// RFC 6528 section 3: a live stack's ISN secret must not be one every
	// run shares; a given seed still repeats a run.
	It("draws its TCP secrets' seed afresh each run unless --seed gives one", func() {
		parse := func(extra ...string) uint64 {
			var errOut strings.Builder
			c, _, ok := parseServeFlags(append([]string{"--tap", "x", "--ip", "10.78.0.2/24", "--app", "kv", "--port", "6379"}, extra...), &errOut)
			Expect(ok).To(BeTrue(), errOut.String())
			return c.port.seed
		}
		Expect(parse()).NotTo(Equal(parse()))
		Expect(parse("--seed", "7")).To(Equal(uint64(7)))
		Expect(parse("--seed", "7")).To(Equal(parse("--seed", "7")))
	})
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

var _ = Describe("simrun serve --ip", func() {
	parse := func(args ...string) (serveConfig, string, bool) {
		var errOut strings.Builder
		c, _, ok := parseServeFlags(append([]string{"--tap", "x", "--app", "kv", "--port", "6379"}, args...), &errOut)
		return c, errOut.String(), ok
	}

	DescribeTable("takes an IPv4 address, an IPv6 one or one of each, repeated or comma-separated",
		func(want4, want6, ready string, args ...string) {
			c, errOut, ok := parse(args...)
			Expect(ok).To(BeTrue(), errOut)
			Expect(c.cidr).To(Equal(want4))
			Expect(c.cidr6).To(Equal(want6))
			Expect(c.listenAddrs()).To(Equal(ready))
			ic := c.ifaceConfig()
			Expect(ic.Validate()).To(Succeed())
			Expect(ic.HasIPv6()).To(Equal(want6 != ""))
		},
		Entry("IPv4 only, as before", "10.77.0.2/24", "", "10.77.0.2:6379", "--ip", "10.77.0.2/24"),
		Entry("IPv6 only", "", "fd00::2/64", "[fd00::2]:6379", "--ip", "fd00::2/64"),
		Entry("both, repeated", "10.77.0.2/24", "fd00::2/64", "10.77.0.2:6379 and [fd00::2]:6379", "--ip", "10.77.0.2/24", "--ip", "fd00::2/64"),
		Entry("both, comma-separated, IPv6 first", "10.77.0.2/24", "fd00::2/64", "10.77.0.2:6379 and [fd00::2]:6379", "--ip", "fd00::2/64,10.77.0.2/24"),
	)

	DescribeTable("refuses what the stack cannot take, naming the flag and the value",
		func(want string, args ...string) {
			_, errOut, ok := parse(args...)
			Expect(ok).To(BeFalse())
			Expect(errOut).To(ContainSubstring(want))
		},
		Entry("no address", "--ip and --port are required"),
		Entry("no prefix length", `--ip "fd00::2": want an address with its prefix length, IPv4 or IPv6`, "--ip", "fd00::2"),
		Entry("a host name", `--ip "localhost/8": want an address with its prefix length`, "--ip", "localhost/8"),
		Entry("a zone", `--ip "fe80::1%sv0/64": want an address with its prefix length`, "--ip", "fe80::1%sv0/64"),
		Entry("two IPv6 addresses", `--ip "fd00::3/64": a second IPv6 address (fd00::2/64 given already)`, "--ip", "fd00::2/64,fd00::3/64"),
		Entry("two IPv4 addresses", `--ip "10.77.0.3/24": a second IPv4 address (10.77.0.2/24 given already)`, "--ip", "10.77.0.2/24", "--ip", "10.77.0.3/24"),
		Entry("a link-local address, which the stack forms itself", "--ip fe80::2/64: ipv6.address: fe80::2 is not a global or unique local unicast address", "--ip", "fe80::2/64"),
		Entry("a multicast IPv6 address", "--ip ff02::2/64: ipv6.address:", "--ip", "ff02::2/64"),
		Entry("an IPv4 network address", "--ip 10.77.0.0/24: address: 10.77.0.0 is the network or broadcast address", "--ip", "10.77.0.0/24"),
		Entry("an MTU IPv6 cannot use", "--mtu 1200: mtu: 1200 is below the 1280 bytes IPv6 needs", "--ip", "fd00::2/64", "--mtu", "1200"),
		Entry("a gateway without IPv4", "--gateway: gateway: fd00::1 needs an IPv4 address", "--ip", "fd00::2/64", "--gateway", "fd00::1"),
		Entry("a DAD count past 10", "--dad-transmits 11: want 0..10", "--ip", "fd00::2/64", "--dad-transmits", "11"),
	)

	It("says in its usage that --ip takes both families", func() {
		Expect(serveUsage).To(ContainSubstring("--ip CIDR[,CIDR]"))
		Expect(serveUsage).To(ContainSubstring("--ip 10.77.0.2/24 --ip\nfd00::2/64"))
	})
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

// The IPv6 live specs' addresses, inside their own namespaces only: the
// kernel side of the TAP is fd00::1 (and 10.77.0.1), Savanna fd00::2
// (and 10.77.0.2). Savanna's link-local address is formed from serve's
// default MAC 02:53:56:00:00:02 by RFC 4291 section 2.5.6 and appendix A
// (the universal/local bit inverted, ff:fe in the middle).
const (
	live6Kernel  = "fd00::1"
	live6Stack   = "fd00::2"
	live6StackLL = "fe80::53:56ff:fe00:2"
	live6MAC     = "02:53:56:00:00:02"
)

// live6Skip skips unless root with ip netns, /dev/net/tun and the
// programs named.
func live6Skip(need ...string) {
	if os.Geteuid() != 0 {
		Skip("live IPv6 specs need root (network namespaces, TAP)")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		Skip("live IPv6 specs need /dev/net/tun")
	}
	for _, p := range append([]string{"ip"}, need...) {
		if _, err := exec.LookPath(p); err != nil {
			Skip(fmt.Sprintf("live IPv6 spec needs %s (apt-get install iputils-ping redis-tools tcpdump curl)", p))
		}
	}
}

// liveServe6 starts simrun serve on the TAP sv0 in a namespace of its
// own with args (which give --ip and --app), before running first in the
// namespace; it gives the kernel side fd00::1/64 (without DAD: nodad) and
// 10.77.0.1/24, and waits until serve logs that fd00::2 passed Duplicate
// Address Detection unless dup says Linux holds it.
func liveServe6(before func(ns string), dup bool, args ...string) *livetest.Serve {
	liveOnce.Do(func() { liveBin, _, liveErr = livetest.BuildSimrun("SAVANNA_SIMRUN") })
	Expect(liveErr).NotTo(HaveOccurred())
	liveSeq++
	s := livetest.StartServeInNamespaceAfter(fmt.Sprintf("sv6-%d-%d", os.Getpid(), liveSeq), liveBin, 20*time.Second, before,
		append([]string{"--tap", "sv0"}, args...)...)
	if !dup {
		out, err := s.Exec(10*time.Second, "ip", "-6", "addr", "add", live6Kernel+"/64", "dev", "sv0", "nodad")
		Expect(err).NotTo(HaveOccurred(), out)
	}
	out, err := s.Exec(10*time.Second, "ip", "addr", "add", "10.77.0.1/24", "dev", "sv0")
	Expect(err).NotTo(HaveOccurred(), out)
	want := `msg="ipv6 address assigned" addr=` + live6Stack + "/64"
	if dup {
		want = `msg="ipv6 address is a duplicate: `
	}
	Eventually(s.Log).WithTimeout(10*time.Second).WithPolling(20*time.Millisecond).Should(ContainSubstring(want), "DAD's outcome for fd00::2")
	Eventually(s.Log).WithTimeout(10*time.Second).WithPolling(20*time.Millisecond).
		Should(ContainSubstring(`msg="ipv6 address assigned" addr=`+live6StackLL+"/64"), "DAD's outcome for the link-local address")
	return s
}

// makeTAP creates the TAP name in ns as a multi-queue TAP (the flags
// hw/tap opens it with), brings it up, and runs the extra commands.
func makeTAP(ns, name string, extra ...[]string) {
	for _, c := range append([][]string{{"ip", "tuntap", "add", "dev", name, "mode", "tap", "multi_queue"},
		{"ip", "link", "set", name, "up"}}, extra...) {
		out, err := livetest.Run(10*time.Second, "ip", append([]string{"netns", "exec", ns}, c...)...)
		Expect(err).NotTo(HaveOccurred(), "%v: %s", c, out)
	}
}

// kernelJoined waits until Linux listens to group on dev in ns: it joins
// an address's solicited-node group from a work queue, after the address
// is added, and answers Duplicate Address Detection only once it has.
func kernelJoined(ns, dev, group string) {
	Eventually(func() string {
		out, _ := livetest.Run(10*time.Second, "ip", "netns", "exec", ns, "ip", "-6", "maddr", "show", "dev", dev)
		return out
	}).WithTimeout(10*time.Second).WithPolling(50*time.Millisecond).Should(ContainSubstring(group), "Linux joined %s on %s", group, dev)
}

// pingSummary matches ping's last lines.
var (
	pingReceived = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`)
	pingRTT      = regexp.MustCompile(`rtt min/avg/max/mdev = \S+ ms`)
)

// ping6 pings target from the namespace count times, until every echo
// is answered (Savanna's DAD may still be running on the first try), and
// returns ping's rtt line.
func ping6(s *livetest.Serve, target string, count int) string {
	var out string
	Eventually(func() string {
		out, _ = s.Exec(30*time.Second, "ping", "-6", "-c", fmt.Sprint(count), "-i", "0.2", "-W", "2", target)
		if m := pingReceived.FindStringSubmatch(out); m != nil && m[1] == m[2] {
			return m[2]
		}
		return ""
	}).WithTimeout(40*time.Second).WithPolling(500*time.Millisecond).Should(Equal(fmt.Sprint(count)), "ping -6 %s", target)
	GinkgoWriter.Printf("ping -6 %s:\n%s\n", target, out)
	return pingRTT.FindString(out)
}

// ctlTotals asks the serve behind sock for its totals.
func ctlTotals(sock string) control.Totals {
	out, err := livetest.Run(20*time.Second, liveBin, "ctl", "--socket", sock, "--json", "show")
	Expect(err).NotTo(HaveOccurred(), out)
	var t control.Totals
	Expect(json.Unmarshal([]byte(out), &t)).To(Succeed(), out)
	return t
}

// ctlConnMSS returns the MSS of serve's established connection from
// remote, or 0.
func ctlConnMSS(sock, remote string) int {
	out, err := livetest.Run(20*time.Second, liveBin, "ctl", "--socket", sock, "show", "--conn", "--json")
	Expect(err).NotTo(HaveOccurred(), out)
	var got control.Sockets
	Expect(json.Unmarshal([]byte(out), &got)).To(Succeed(), out)
	for _, x := range got.Sockets {
		if x.State == "ESTABLISHED" && x.Remote == remote {
			return x.MSS
		}
	}
	return 0
}

var _ = Describe("simrun serve over IPv6, live against Linux", Label("live"), func() {
	It("answers ping -6 to its global and link-local addresses, and Linux learns both through ND with Savanna's MAC", func() {
		live6Skip("ping", "tcpdump")
		pcap := filepath.Join(shortTempDir(), "nd.pcap")
		var dump *livetest.Proc
		s := liveServe6(func(ns string) {
			// sv0 made first, so that tcpdump sees serve's first frames:
			// DAD's solicitations and the MLD reports.
			makeTAP(ns, "sv0")
			// "ip6", not "icmp6": MLD messages come after a hop-by-hop
			// header (RFC 3810 section 5), which tcpdump's icmp6 skips.
			var err error
			dump, err = livetest.StartInNetns(ns, 2*time.Minute, "tcpdump", "-i", "sv0", "-U", "-n", "-w", pcap, "ip6")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { _ = dump.Stop() })
			Eventually(dump.Output).WithTimeout(10 * time.Second).Should(ContainSubstring("listening on sv0"))
		}, false, "--ip", "10.77.0.2/24", "--ip", live6Stack+"/64", "--app", "kv", "--port", "6379")
		Expect(s.Ready()).To(Equal("savanna: serving kv on 10.77.0.2:6379 and [fd00::2]:6379 (tap sv0, 1 lcore)"))

		global := ping6(s, live6Stack, 10)
		ll := ping6(s, live6StackLL+"%sv0", 10)
		AddReportEntry("ping -6 from Linux", fmt.Sprintf("%s: %s; %s: %s", live6Stack, global, live6StackLL, ll))

		neigh, err := s.Exec(10*time.Second, "ip", "-6", "neigh", "show", "dev", "sv0")
		Expect(err).NotTo(HaveOccurred(), neigh)
		GinkgoWriter.Printf("ip -6 neigh show dev sv0:\n%s", neigh)
		for _, a := range []string{live6Stack, live6StackLL} {
			Expect(neigh).To(MatchRegexp(`(?m)^`+regexp.QuoteMeta(a)+` lladdr `+live6MAC+` .*(REACHABLE|STALE|DELAY|PROBE)`),
				"Linux resolved %s to Savanna's MAC", a)
		}
		AddReportEntry("ip -6 neigh show dev sv0", neigh)

		Expect(dump.Stop()).To(Or(Succeed(), HaveOccurred())) // tcpdump ends on SIGTERM with status 0 or signal
		frames, err := livetest.Run(20*time.Second, "tcpdump", "-r", pcap, "-n", "-v")
		Expect(err).NotTo(HaveOccurred(), frames)
		GinkgoWriter.Printf("tcpdump of ICMPv6 on sv0:\n%s", frames)
		// DAD for the link-local and global addresses (from ::, RFC 4862
		// section 5.4.2), and MLDv2 reports joining their solicited-node
		// group ff02::1:ff00:2 (RFC 3810 section 5.2, RFC 4291 section
		// 2.7.1), which both addresses share.
		Expect(frames).To(MatchRegexp(`:: > ff02::1:ff00:2: .*neighbor solicitation, length \d+, who has ` + regexp.QuoteMeta(live6Stack)))
		Expect(frames).To(MatchRegexp(`:: > ff02::1:ff00:2: .*neighbor solicitation, length \d+, who has ` + regexp.QuoteMeta(live6StackLL)))
		Expect(frames).To(MatchRegexp(`> ff02::16: .*multicast listener report v2`))
		Expect(frames).To(ContainSubstring("ff02::1:ff00:2"))

		Expect(s.Stop()).To(Succeed())
		Expect(s.Stat("lcore0 ipv6", "icmpv6.in_echos")).To(BeNumerically(">=", 20))
		Expect(s.Stat("lcore0 ipv6", "icmpv6.out_echo_replies")).To(BeNumerically(">=", 20))
		Expect(s.Stat("lcore0 ipv6", "ndp.tx_dad_solicits")).To(BeNumerically(">=", 2))
		Expect(s.Stat("lcore0 ipv6", "ndp.tx_reports")).To(BeNumerically(">=", 1))
		Expect(s.Output()).To(MatchRegexp(`(?m)^ipv6 addrs: fd00::2/64=preferred fe80::53:56ff:fe00:2/64=preferred$`))
	})

	It("pings Linux's global and link-local addresses from a Savanna stack and resolves Linux's MAC through ND", func() {
		live6Skip()
		ns := fmt.Sprintf("sv6p-%d", os.Getpid())
		out, err := livetest.Run(10*time.Second, "ip", "netns", "add", ns)
		if err != nil {
			Skip(fmt.Sprintf("ip netns add failed (%v): %s", err, out))
		}
		DeferCleanup(func() { livetest.DeleteNetns(ns) })
		// The TAP is made and brought up by ip: the stack only attaches.
		makeTAP(ns, "sv1")
		ts, err := livetest.StartTapStack(ns, "sv1", iface.Config{IPv6: iface.IPv6Config{Address: live6Stack + "/64"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(ts.Stop)
		exec6 := func(args ...string) string {
			out, err := livetest.Run(10*time.Second, "ip", append([]string{"netns", "exec", ns}, args...)...)
			Expect(err).NotTo(HaveOccurred(), "%v: %s", args, out)
			return out
		}
		exec6("ip", "-6", "addr", "add", live6Kernel+"/64", "dev", "sv1", "nodad")
		mac := strings.TrimSpace(exec6("cat", "/sys/class/net/sv1/address"))
		var kernelLL netip.Addr
		Eventually(func() bool {
			for _, f := range strings.Fields(exec6("ip", "-6", "-o", "addr", "show", "dev", "sv1", "scope", "link")) {
				if p, err := netip.ParsePrefix(f); err == nil && !strings.Contains(exec6("ip", "-6", "-o", "addr", "show", "dev", "sv1", "scope", "link", "tentative"), f) {
					kernelLL = p.Addr()
					return true
				}
			}
			return false
		}).WithTimeout(10*time.Second).WithPolling(100*time.Millisecond).Should(BeTrue(), "Linux's link-local address past its DAD")
		Eventually(func() bool { return livetest.Assigned6(ts.R) }).WithTimeout(10 * time.Second).WithPolling(20 * time.Millisecond).Should(BeTrue())

		lc := ts.R.Lcores()[0]
		// The reply's arrival is timed on the lcore, as it is handled.
		type reply struct {
			seq uint16
			at  time.Time
		}
		replies := make(chan reply, 64)
		Expect(lc.Submit(func(lc *rt.Lcore) {
			lc.Instance().Iface().SetEchoHandler6(func(_ time.Duration, _ ipv6.Addr, id, seq uint16, _ []byte) {
				if id == 0x5356 {
					replies <- reply{seq, time.Now()}
				}
			})
		})).To(Succeed())
		var report []string
		seq := uint16(0)
		for _, dst := range []netip.Addr{netip.MustParseAddr(live6Kernel), kernelLL} {
			var rtts []time.Duration
			for i := 0; i < 5; i++ {
				seq++
				sent := time.Now()
				s := seq
				Expect(lc.Submit(func(lc *rt.Lcore) {
					_ = lc.Instance().Iface().SendEcho6(lc.Now(), dst.As16(), 0x5356, s, []byte("savanna ping6"))
				})).To(Succeed())
				var got reply
				Eventually(replies).WithTimeout(5*time.Second).Should(Receive(&got), "echo reply %d from %s", s, dst)
				Expect(got.seq).To(Equal(s))
				rtts = append(rtts, got.at.Sub(sent).Round(time.Microsecond))
			}
			report = append(report, fmt.Sprintf("%s: %v", dst, rtts))
			info := make(chan ndp.NeighborInfo, 1)
			Expect(lc.Submit(func(lc *rt.Lcore) {
				n, _ := lc.Instance().Iface().NDP().Neighbor(dst.As16())
				info <- n
			})).To(Succeed())
			var n ndp.NeighborInfo
			Eventually(info).WithTimeout(5 * time.Second).Should(Receive(&n))
			Expect(n.MAC.String()).To(Equal(mac), "Savanna resolved %s to Linux's MAC", dst)
			Expect(n.State.String()).To(BeElementOf("REACHABLE", "STALE", "DELAY", "PROBE"))
			report = append(report, fmt.Sprintf("neighbour %s lladdr %s %s", dst, n.MAC, n.State))
		}
		AddReportEntry("ping6 from Savanna to Linux (wall-clock round trips)", strings.Join(report, "\n"))
		GinkgoWriter.Println(strings.Join(report, "\n"))
		s6 := ts.R.Snapshot().Lcores[0].Iface6
		Expect(s6.ICMPv6.InEchoReplies).To(BeEquivalentTo(10))
		Expect(s6.NDP.TxNeighborSolicits).To(BeNumerically(">=", 2), "one resolution per destination")
	})

	It("finds by DAD that Linux holds fd00::2 already: logs, counts and lists it as duplicate, and serves on its link-local address", func() {
		live6Skip("redis-cli", "ping")
		sock := filepath.Join(shortTempDir(), "serve.sock")
		s := liveServe6(func(ns string) {
			makeTAP(ns, "sv0", []string{"ip", "-6", "addr", "add", live6Stack + "/64", "dev", "sv0", "nodad"})
			kernelJoined(ns, "sv0", "ff02::1:ff00:2")
		}, true, "--ip", live6Stack+"/64", "--app", "kv", "--port", "6379", "--ctl", sock,
			// Linux handles the carrier serve's attach brings from a work
			// queue (net/core/link_watch.c), and until it has, sv0's qdisc
			// is noop and drops what Linux sends: at times its answer to
			// the first solicitation, which goes out at once. Three, 1 s
			// apart, leave it the time.
			"--dad-transmits", "3")
		Expect(s.Ready()).To(Equal("savanna: serving kv on [fd00::2]:6379 (tap sv0, 1 lcore)"))
		Expect(s.Log()).To(MatchRegexp(`level=WARN msg="ipv6 address is a duplicate: .*" addr=fd00::2/64 origin=static`))
		t := ctlTotals(sock)
		states := map[string]string{}
		for _, a := range t.Runtime.Lcores[0].Addrs6 {
			states[a.Prefix().String()] = a.State
		}
		Expect(states).To(Equal(map[string]string{live6Stack + "/64": "duplicate", live6StackLL + "/64": "preferred"}))
		Expect(t.Runtime.Lcores[0].Iface6.NDP.DADDuplicates).To(BeEquivalentTo(1))

		// Still up on the link-local address; a TCP connection to it.
		AddReportEntry("ping -6 the link-local address with fd00::2 a duplicate", ping6(s, live6StackLL+"%sv0", 3))
		out, err := s.Exec(20*time.Second, "redis-cli", "-h", live6StackLL+"%sv0", "PING")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.TrimSpace(out)).To(Equal("PONG"))

		Expect(s.Stop()).To(Succeed())
		Expect(s.Stat("lcore0 ipv6", "ndp.dad_duplicates")).To(BeEquivalentTo(1))
		Expect(s.Output()).To(MatchRegexp(`(?m)^ipv6 addrs: fd00::2/64=duplicate fe80::53:56ff:fe00:2/64=preferred$`))
	})

	It("serves redis-benchmark -h fd00::2, redis-cli and curl -6 (RESP over gopher://) beside IPv4 on one dual-stack listener", func() {
		live6Skip("redis-benchmark", "redis-cli", "curl")
		s := liveServe6(nil, false, "--ip", "10.77.0.2/24,"+live6Stack+"/64", "--app", "kv", "--port", "6379")
		Expect(s.RedisSetGet(live6Stack, "k6", "v6")).To(Succeed())
		Expect(s.RedisSetGet("10.77.0.2", "k4", "v4")).To(Succeed())
		out, err := s.Exec(2*time.Minute, "redis-benchmark", "-h", live6Stack, "-p", "6379", "-n", "10000", "-c", "20", "-t", "set,get", "-q")
		Expect(err).NotTo(HaveOccurred(), out)
		rates := livetest.RedisBenchmarkRates(out)
		Expect(rates).To(HaveKey("SET"), out)
		Expect(rates).To(HaveKey("GET"), out)
		AddReportEntry("redis-benchmark -h fd00::2 -n 10000 -c 20 -t set,get", fmt.Sprintf("SET %s rps, GET %s rps", rates["SET"], rates["GET"]))
		GinkgoWriter.Printf("redis-benchmark -h fd00::2: SET %s rps, GET %s rps\n", rates["SET"], rates["GET"])
		// kv speaks RESP, not HTTP, and serve has no HTTP app: curl's
		// gopher:// sends the path's bytes as they are and a CRLF, here
		// the RESP inline commands PING and QUIT, and prints the answers
		// until kv closes.
		out, err = s.Exec(20*time.Second, "curl", "-6", "-sS", "--max-time", "10", "gopher://["+live6Stack+"]:6379/_PING%0D%0AQUIT")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(Equal("+PONG\r\n+OK\r\n"))
		AddReportEntry("curl -6 gopher://[fd00::2]:6379/_PING%0D%0AQUIT", fmt.Sprintf("%q", out))

		Expect(s.Stop()).To(Succeed())
		Expect(s.Stat("app kv", "commands")).To(BeNumerically(">=", 20000+4+2))
	})

	It("echoes 256 MiB each way intact over IPv6 with 1% loss of the kernel's frames", Label("slow"), func() {
		live6Skip()
		netem := false
		ns := fmt.Sprintf("sv6n-%d", os.Getpid())
		if out, err := livetest.Run(10*time.Second, "ip", "netns", "add", ns); err == nil {
			_, err := livetest.Run(10*time.Second, "ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "loss", "1%")
			netem = err == nil
			_, _ = livetest.Run(10*time.Second, "ip", "netns", "del", ns)
		} else {
			Skip(fmt.Sprintf("ip netns add failed (%v): %s", err, out))
		}
		args := []string{"--ip", live6Stack + "/64", "--app", "echo", "--port", "7"}
		how := "tc netem loss 1% on sv0 (the kernel's end)"
		if !netem {
			// The same loss where netem would put it, on what the kernel
			// sends, applied by the TAP port (hw/tap's RxLoss).
			args = append(args, "--rx-loss", "0.01", "--seed", "7")
			how = "no sch_netem in this kernel: serve's --rx-loss 0.01 drops 1% of the kernel's frames"
		}
		s := liveServe6(nil, false, args...)
		if netem {
			out, err := s.Exec(10*time.Second, "tc", "qdisc", "add", "dev", "sv0", "root", "netem", "loss", "1%")
			Expect(err).NotTo(HaveOccurred(), out)
		}
		sum, el := echoBulk6(s.NS, "["+live6Stack+"]:7", 256<<20, nil)
		AddReportEntry("256 MiB echoed over IPv6", fmt.Sprintf("%v, sha256 %s, %s", el, sum, how))
		Expect(s.Stop()).To(Succeed())
		Expect(s.Stat("app echo", "bytes")).To(BeEquivalentTo(256 << 20))
		if !netem {
			Expect(s.Output()).To(MatchRegexp(`impair_rx_dropped=[1-9]`), "the TAP dropped the kernel's frames")
		}
		GinkgoWriter.Printf("retransmissions by Savanna: %d\n", s.Stat("lcore0 tcp", "retrans_segs"))
	})

	It("lowers a connection's MSS on a Packet Too Big from the kernel side and completes the transfer", func() {
		live6Skip()
		sock := filepath.Join(shortTempDir(), "serve.sock")
		s := liveServe6(nil, false, "--ip", live6Stack+"/64", "--app", "echo", "--port", "7", "--ctl", sock)
		var before, after int
		sum, el := echoBulk6(s.NS, "["+live6Stack+"]:7", 64<<20, func(local netip.AddrPort, received int) bool {
			if received < 4<<20 {
				return false
			}
			// ctl's MSS is what a segment carries: the MSS less the
			// 12 bytes of the timestamp option Linux negotiates.
			before = ctlConnMSS(sock, local.String())
			Expect(before).To(BeElementOf(1500-40-20, 1500-40-20-12), "the MSS the 1500-byte link allows over IPv6")
			Expect(injectPTB(s.NS, local, 1280)).To(Succeed())
			Eventually(func() int { after = ctlConnMSS(sock, local.String()); return after }).WithTimeout(5*time.Second).
				Should(Equal(before-(1500-1280)), "RFC 8201 section 5.2: the packetization layer follows the path MTU")
			return true
		})
		Expect(before).NotTo(BeZero(), "the PTB was sent mid-transfer")
		AddReportEntry("Packet Too Big (MTU 1280) mid-transfer", fmt.Sprintf("MSS %d -> %d; 64 MiB echoed in %v, sha256 %s", before, after, el, sum))
		Expect(s.Stop()).To(Succeed())
		Expect(s.Stat("lcore0 ipv6", "icmpv6.in_pkt_too_bigs")).To(BeEquivalentTo(1))
		Expect(s.Stat("lcore0 ipv6", "pmtu.lowered")).To(BeEquivalentTo(1))
		Expect(s.Stat("app echo", "bytes")).To(BeEquivalentTo(64 << 20))
	})
})

// echoBulk6 sends total pseudo-random bytes from a kernel socket in ns
// to the echo server at target, reads the echo concurrently and checks
// both sha256 sums; after each read it calls mid (when not nil) with the
// socket's local address and the bytes received so far, until mid
// returns true. It returns the sum and the time taken.
func echoBulk6(ns, target string, total int, mid func(local netip.AddrPort, received int) bool) (string, time.Duration) {
	c, err := livetest.DialInNetns(ns, target, 20*time.Second)
	Expect(err).NotTo(HaveOccurred())
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(8 * time.Minute))
	local := c.LocalAddr().(*net.TCPAddr).AddrPort()
	sent := sha256.New()
	start := time.Now()
	werr := make(chan error, 1)
	go func() { werr <- livetest.WriteRandom(c.(*net.TCPConn), total, sent) }()
	got := sha256.New()
	buf := make([]byte, 256<<10)
	n := 0
	for {
		k, err := c.Read(buf)
		got.Write(buf[:k])
		n += k
		if mid != nil && k > 0 && mid(local, n) {
			mid = nil
		}
		if err == io.EOF {
			break
		}
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(<-werr).To(Succeed())
	el := time.Since(start)
	Expect(n).To(Equal(total))
	sum := fmt.Sprintf("%x", got.Sum(nil))
	Expect(sum).To(Equal(fmt.Sprintf("%x", sent.Sum(nil))))
	GinkgoWriter.Printf("%d MiB echoed over IPv6 in %v (%.1f MB/s each way); sha256 %s\n", total>>20, el, float64(total)/el.Seconds()/1e6, sum)
	return sum, el
}

// injectPTB sends Savanna (fd00::2) an ICMPv6 Packet Too Big from the
// kernel side's address (RFC 4443 section 3.2) with the given MTU,
// quoting the start of a segment of the connection Savanna sends to
// local (the kernel socket's address): a raw ICMPv6 socket in ns, whose
// checksum the kernel fills (RFC 3542 section 3.1).
func injectPTB(ns string, local netip.AddrPort, mtu int) error {
	var pc net.PacketConn
	if err := livetest.InNetns(ns, func() error {
		var err error
		pc, err = net.ListenPacket("ip6:ipv6-icmp", live6Kernel)
		return err
	}); err != nil {
		return err
	}
	defer pc.Close()
	// The quoted packet: Savanna's IPv6 header (payload 1440 + 20: a
	// full-sized segment) and its TCP header, from port 7 to local.
	q := make([]byte, 40+20)
	q[0] = 6 << 4
	binary.BigEndian.PutUint16(q[4:], 1460)
	q[6], q[7] = 6, 64
	src, dst := netip.MustParseAddr(live6Stack).As16(), local.Addr().As16()
	copy(q[8:], src[:])
	copy(q[24:], dst[:])
	binary.BigEndian.PutUint16(q[40:], 7)
	binary.BigEndian.PutUint16(q[42:], local.Port())
	q[52] = 5 << 4
	q[53] = 0x10
	msg := make([]byte, 8, 8+len(q))
	msg[0] = 2 // Packet Too Big, code 0
	binary.BigEndian.PutUint32(msg[4:], uint32(mtu))
	msg = append(msg, q...)
	_, err := pc.WriteTo(msg, &net.IPAddr{IP: net.ParseIP(live6Stack)})
	return err
}
