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
		l := startDPDKServe(tapIface, stackIP+"/24", kernelCIDR, "--app", "kv", "--port", "6379", "--cores", fmt.Sprint(cores))
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
// kernel side kernelCIDR. Cleanup stops serve and deletes the namespace.
func startDPDKServe(iface, stackCIDR, kernelCIDR string, app ...string) *livetest.Serve {
	// -l 0-1: the main lcore and one worker the EAL keeps idle; serve's
	// lcore registers itself (rte_thread_register) and takes a free id.
	ealArgs := "--no-huge -m 256 --no-pci --no-shconf -l 0-1 --no-telemetry --log-level=lib.eal:error " +
		"--vdev=net_tap0,iface=" + iface
	l := livetest.StartServeInNamespace(fmt.Sprintf("svd-%d", os.Getpid()), dpdkSimrun(), 30*time.Second,
		append([]string{"--backend", "dpdk", "--eal", ealArgs, "--ip", stackCIDR}, app...)...)
	// net_tap brings its interface up when the port starts; the kernel
	// side only needs an address.
	out, err := l.Exec(10*time.Second, "ip", "addr", "add", kernelCIDR, "dev", iface)
	Expect(err).NotTo(HaveOccurred(), out)
	out, err = l.Exec(10*time.Second, "ip", "link", "set", iface, "up")
	Expect(err).NotTo(HaveOccurred(), out)
	return l
}
