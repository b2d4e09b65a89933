//go:build dpdk && linux

package dpdk_test

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
)

// The live spec of docs/live.md run again on DPDK: redis-benchmark from
// the Linux kernel against "simrun serve --backend dpdk" on DPDK's TAP
// PMD (net_tap). net_tap creates its interface in the namespace of the
// process that probes it, so serve runs inside a network namespace the
// spec makes (ip netns exec), and its interface, the kernel's address on
// it and redis-benchmark all live there: nothing touches the root
// namespace, and parallel runs do not collide.
var _ = Describe("simrun serve --backend dpdk on net_tap", Label("dpdk", "live", "slow"), func() {
	const (
		tapIface   = "svd0"
		kernelCIDR = "10.78.0.1/24"
		stackIP    = "10.78.0.2"
	)

	BeforeEach(func() {
		if os.Geteuid() != 0 {
			Skip("live interop needs root (network namespaces, /dev/net/tun)")
		}
		for _, tool := range []string{"ip", "redis-benchmark", "redis-cli"} {
			if _, err := exec.LookPath(tool); err != nil {
				Skip(tool + " is missing: .ci/run installs iproute2 and redis-tools")
			}
		}
		if _, err := os.Stat("/dev/net/tun"); err != nil {
			Skip("live interop needs /dev/net/tun")
		}
	})

	DescribeTable("answers every request of redis-benchmark -t ping,set,get -n 100000 -c 50 against kv", func(cores int, ready string) {
		l := startDPDKServe(tapIface, stackIP+"/24", kernelCIDR, nil, "--app", "kv", "--port", "6379", "--cores", fmt.Sprint(cores))
		Expect(l.Ready()).To(Equal(ready))

		Expect(l.RedisSetGet(stackIP, "greeting", "hello from dpdk")).To(Succeed())
		found, err := l.RedisBenchmark(5*time.Minute, stackIP)
		Expect(err).NotTo(HaveOccurred())
		for _, t := range livetest.RedisBenchmarkTests() {
			AddReportEntry(fmt.Sprintf("redis-benchmark %s over net_tap (%d lcores)", t, cores), found[t]+" requests per second")
			GinkgoWriter.Printf("redis-benchmark %s over net_tap (%d lcores): %s requests per second\n", t, cores, found[t])
		}
		Expect(l.Stop()).To(Succeed())
		// Every request reached the app: 4 tests x 100000, the two
		// redis-cli commands, and the CONFIG GETs redis-benchmark sends
		// first.
		Expect(l.Stat("app kv", "commands")).To(BeNumerically(">=", 400002))
		// And the port's counters are DPDK's: frames crossed net_tap.
		Expect(l.Stat("nic", "ipackets")).To(BeNumerically(">=", 400002))
		Expect(l.Stat("nic", "rx_nombuf")).To(BeZero())
	},
		Entry("on 1 lcore", 1, "savanna: serving kv on 10.78.0.2:6379 (dpdk port net_tap0, 1 lcore)"),
		// Two queues of one TAP: the kernel's tun driver picks the queue
		// per flow (net_tap's RSS needs rte_flow, which needs the multiq
		// qdisc; without it the PMD disables flow support), so each
		// connection stays on one lcore.
		Entry("on 2 lcores over a two-queue net_tap", 2, "savanna: serving kv on 10.78.0.2:6379 (dpdk port net_tap0, 2 lcores)"),
	)
})

var (
	dpdkSimrunOnce sync.Once
	dpdkSimrunBin  string
	// dpdkSimrunCleanup removes the binary built for the suite.
	dpdkSimrunCleanup func()
	dpdkSimrunErr     error
)

// dpdkSimrun builds cmd/simrun with -tags dpdk once (or takes
// $SAVANNA_SIMRUN_DPDK).
func dpdkSimrun() string {
	dpdkSimrunOnce.Do(func() {
		dpdkSimrunBin, dpdkSimrunCleanup, dpdkSimrunErr = livetest.BuildSimrun("SAVANNA_SIMRUN_DPDK", "dpdk")
	})
	Expect(dpdkSimrunErr).NotTo(HaveOccurred())
	return dpdkSimrunBin
}

// The simrun binary built for the live spec goes with the suite.
var _ = AfterSuite(func() {
	if dpdkSimrunCleanup != nil {
		dpdkSimrunCleanup()
	}
})

// startDPDKServe makes the namespace svd-<pid>, runs serve in it on
// net_tap (interface iface), waits for its ready line and gives the
// kernel side kernelCIDR. before, when not nil, runs in the new
// namespace before serve starts. Cleanup stops serve and deletes the
// namespace.
func startDPDKServe(iface, stackCIDR, kernelCIDR string, before func(ns string), app ...string) *livetest.Serve {
	// -l 0-1: the main lcore and one worker the EAL keeps idle; serve's
	// lcore registers itself (rte_thread_register) and takes a free id.
	ealArgs := "--no-huge -m 256 --no-pci --no-shconf -l 0-1 --no-telemetry --log-level=lib.eal:error " +
		"--vdev=net_tap0,iface=" + iface
	l := livetest.StartServeInNamespaceAfter(fmt.Sprintf("svd-%d", os.Getpid()), dpdkSimrun(), 30*time.Second, before,
		append([]string{"--backend", "dpdk", "--eal", ealArgs, "--ip", stackCIDR}, app...)...)
	// net_tap brings its interface up when the port starts; the kernel
	// side only needs an address.
	out, err := l.Exec(10*time.Second, "ip", "addr", "add", kernelCIDR, "dev", iface)
	Expect(err).NotTo(HaveOccurred(), out)
	out, err = l.Exec(10*time.Second, "ip", "link", "set", iface, "up")
	Expect(err).NotTo(HaveOccurred(), out)
	return l
}

// IPv6 over two queues of net_tap: which queue, hence which lcore, a
// flow lands on is the Linux kernel's choice, not a NIC's Toeplitz hash.
// The tun driver picks the queue a frame from the kernel goes to from
// the skb's flow hash (tun_automq_select_queue, drivers/net/tun.c: the
// flow dissector's hash of the addresses and ports, IPv6's 16-byte
// addresses included), and net_tap offers no RSS of its own without
// rte_flow (see above). So distinct IPv6 flows spread over the queues
// and every segment of one flow stays on one lcore, which is all
// Savanna's per-lcore instances need; a NIC's RSS of IPv6 (hw.RSSIPv6TCP,
// Microsoft's Toeplitz over the 4-tuple) is the simulated NIC's and a
// real port's business, specified in sim/nic and hw/dpdk's RSS specs.
var _ = Describe("simrun serve --backend dpdk over IPv6 on a two-queue net_tap", Label("dpdk", "live", "slow"), func() {
	const (
		tapIface   = "svd0"
		kernelCIDR = "10.78.0.1/24"
		stackIP    = "10.78.0.2"
		kernel6    = "fd00:78::1"
		stack6     = "fd00:78::2"
		// conns is how many connections redis-benchmark opens: -k 0
		// reconnects for every request, so each is a flow of its own
		// (a new source port).
		conns = 2000
	)

	BeforeEach(func() {
		if os.Geteuid() != 0 {
			Skip("live interop needs root (network namespaces, /dev/net/tun)")
		}
		for _, tool := range []string{"ip", "redis-benchmark", "redis-cli"} {
			if _, err := exec.LookPath(tool); err != nil {
				Skip(tool + " is missing: .ci/run installs iproute2 and redis-tools")
			}
		}
		if _, err := os.Stat("/dev/net/tun"); err != nil {
			Skip("live interop needs /dev/net/tun")
		}
	})

	It("serves IPv6 connections from many kernel flows on both lcores", func() {
		// net_tap gives the kernel's interface the port's own MAC
		// (eth_dev_tap_create sets it with SIOCSIFHWADDR), so the two
		// sides' EUI-64 link-local addresses are the same address, and
		// the kernel's DAD for it makes Savanna's a duplicate (RFC 4862
		// section 5.4.3), which disables IPv6 on the interface (section
		// 5.4.5). The kernel side therefore makes no link-local address
		// of its own (addr_gen_mode 1, "none"); its global address is
		// enough for Neighbor Discovery with Savanna's.
		noLinkLocal := func(ns string) {
			out, err := livetest.Run(10*time.Second, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.default.addr_gen_mode=1")
			Expect(err).NotTo(HaveOccurred(), out)
		}
		l := startDPDKServe(tapIface, stackIP+"/24", kernelCIDR, noLinkLocal, "--ip", stack6+"/64", "--app", "kv", "--port", "6379", "--cores", "2")
		Expect(l.Ready()).To(Equal("savanna: serving kv on 10.78.0.2:6379 and [fd00:78::2]:6379 (dpdk port net_tap0, 2 lcores)"))
		out, err := l.Exec(10*time.Second, "ip", "-6", "addr", "add", kernel6+"/64", "dev", tapIface, "nodad")
		Expect(err).NotTo(HaveOccurred(), out)
		// Each lcore's instance runs Duplicate Address Detection (RFC
		// 4862 section 5.4: up to 1 s of random delay, then 1 s).
		Eventually(l.Log).WithTimeout(15*time.Second).WithPolling(50*time.Millisecond).
			Should(ContainSubstring(`msg="ipv6 address assigned" addr=`+stack6+"/64"), "DAD's outcome for %s", stack6)

		Eventually(func() error { return l.RedisSetGet(stack6, "greeting", "hello over IPv6") }).
			WithTimeout(20 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		out, err = l.Exec(3*time.Minute, "redis-benchmark", "-h", stack6, "-p", "6379",
			"-t", "ping", "-n", fmt.Sprint(conns/2), "-c", "16", "-k", "0", "-q")
		Expect(err).NotTo(HaveOccurred(), out)
		rates := livetest.RedisBenchmarkRates(out)
		Expect(rates).To(HaveKey("PING_INLINE"), out)
		Expect(rates).To(HaveKey("PING_MBULK"), out)
		Expect(l.Stop()).To(Succeed())

		var opens [2]int64
		for lc := range opens {
			opens[lc] = l.Stat(fmt.Sprintf("lcore%d tcp", lc), "passive_opens")
			rx := l.Stat(fmt.Sprintf("lcore%d ipv6", lc), "ipv6.in_receives")
			AddReportEntry(fmt.Sprintf("lcore %d over IPv6", lc), fmt.Sprintf("%d passive opens, %d IPv6 packets in", opens[lc], rx))
			GinkgoWriter.Printf("lcore %d: %d passive opens, %d IPv6 packets in\n", lc, opens[lc], rx)
			Expect(rx).To(BeNumerically(">", 0), "lcore %d received IPv6", lc)
		}
		total := opens[0] + opens[1]
		Expect(total).To(BeNumerically(">=", conns), "every connection redis-benchmark opened (and redis-cli's two)")
		// Each of ~2000 flows goes to a queue by the kernel's hash: a
		// fair split is 1000 +- 22 (one sigma); a fifth is far below
		// any plausible draw, and far above a single queue's 0.
		for lc, n := range opens {
			Expect(n).To(BeNumerically(">", total/5), "lcore %d served its share of the IPv6 flows (%d of %d)", lc, n, total)
		}
		Expect(l.Stat("app kv", "commands")).To(BeNumerically(">=", conns))
		Expect(l.Stat("nic", "rx_nombuf")).To(BeZero())
	})
})
