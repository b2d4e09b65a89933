//go:build dpdk && linux

package dpdk_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
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
		Expect(l.ready).To(Equal(ready))

		out, err := l.exec(20*time.Second, "redis-cli", "-h", stackIP, "SET", "greeting", "hello from dpdk")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.TrimSpace(out)).To(Equal("OK"))
		out, err = l.exec(20*time.Second, "redis-cli", "-h", stackIP, "GET", "greeting")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.TrimSpace(out)).To(Equal("hello from dpdk"))

		out, err = l.exec(5*time.Minute, "redis-benchmark", "-h", stackIP, "-p", "6379",
			"-t", "ping,set,get", "-n", "100000", "-c", "50", "-q")
		Expect(err).NotTo(HaveOccurred(), out)
		found := livetest.RedisBenchmarkRates(out)
		for _, t := range []string{"PING_INLINE", "PING_MBULK", "SET", "GET"} {
			Expect(found).To(HaveKey(t), "redis-benchmark did not finish %s:\n%s", t, out)
			AddReportEntry(fmt.Sprintf("redis-benchmark %s over net_tap (%d lcores)", t, cores), found[t]+" requests per second")
			GinkgoWriter.Printf("redis-benchmark %s over net_tap (%d lcores): %s requests per second\n", t, cores, found[t])
		}
		Expect(l.stop()).To(Succeed())
		// Every request reached the app: 4 tests x 100000, the two
		// redis-cli commands, and the CONFIG GETs redis-benchmark sends
		// first.
		Expect(l.statValue("app kv", "commands")).To(BeNumerically(">=", 400002))
		// And the port's counters are DPDK's: frames crossed net_tap.
		Expect(l.statValue("nic", "ipackets")).To(BeNumerically(">=", 400002))
		Expect(l.statValue("nic", "rx_nombuf")).To(BeZero())
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

// dpdkLive is one namespace with simrun serve --backend dpdk in it.
type dpdkLive struct {
	ns       string
	cmd      *exec.Cmd
	mu       sync.Mutex
	out      strings.Builder
	ready    string
	exited   chan error
	stopOnce sync.Once
	stopErr  error
}

func (l *dpdkLive) output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out.String()
}

// startDPDKServe makes the namespace svd-<pid>, runs serve in it on
// net_tap (interface iface), waits for its ready line and gives the
// kernel side kernelCIDR. Cleanup stops serve and deletes the namespace.
func startDPDKServe(iface, stackCIDR, kernelCIDR string, app ...string) *dpdkLive {
	bin := dpdkSimrun()
	l := &dpdkLive{ns: fmt.Sprintf("svd-%d", os.Getpid()), exited: make(chan error, 1)}
	if out, err := runCmd(10*time.Second, "ip", "netns", "add", l.ns); err != nil {
		Skip(fmt.Sprintf("ip netns add failed (%v): %s", err, out))
	}
	DeferCleanup(func() { _, _ = runCmd(10*time.Second, "ip", "netns", "del", l.ns) })
	_, err := l.exec(10*time.Second, "ip", "link", "set", "lo", "up")
	Expect(err).NotTo(HaveOccurred())

	// -l 0-1: the main lcore and one worker the EAL keeps idle; serve's
	// lcore registers itself (rte_thread_register) and takes a free id.
	ealArgs := "--no-huge -m 256 --no-pci --no-shconf -l 0-1 --no-telemetry --log-level=lib.eal:error " +
		"--vdev=net_tap0,iface=" + iface
	args := append([]string{"netns", "exec", l.ns, bin, "serve", "--backend", "dpdk", "--eal", ealArgs,
		"--ip", stackCIDR}, app...)
	l.cmd = exec.Command("ip", args...)
	stdout, err := l.cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	l.cmd.Stderr = GinkgoWriter
	Expect(l.cmd.Start()).To(Succeed())
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l.mu.Lock()
			l.out.WriteString(sc.Text() + "\n")
			l.mu.Unlock()
		}
		l.exited <- l.cmd.Wait()
	}()
	DeferCleanup(func() { Expect(l.stop()).To(Succeed(), "simrun serve must exit 0 on SIGTERM") })
	Eventually(l.output).WithTimeout(30*time.Second).WithPolling(20*time.Millisecond).
		Should(ContainSubstring("savanna: serving"), "waiting for the ready line")
	l.ready = strings.SplitN(l.output(), "\n", 2)[0]
	// net_tap brings its interface up when the port starts; the kernel
	// side only needs an address.
	out, err := l.exec(10*time.Second, "ip", "addr", "add", kernelCIDR, "dev", iface)
	Expect(err).NotTo(HaveOccurred(), out)
	out, err = l.exec(10*time.Second, "ip", "link", "set", iface, "up")
	Expect(err).NotTo(HaveOccurred(), out)
	return l
}

// stop sends SIGTERM to serve and waits (killing it after 15 s).
func (l *dpdkLive) stop() error {
	l.stopOnce.Do(func() {
		_ = l.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case l.stopErr = <-l.exited:
		case <-time.After(15 * time.Second):
			_ = l.cmd.Process.Kill()
			<-l.exited
			l.stopErr = fmt.Errorf("simrun serve did not stop within 15 s of SIGTERM")
		}
		GinkgoWriter.Printf("simrun serve output:\n%s", l.output())
	})
	return l.stopErr
}

// exec runs a program inside the namespace.
func (l *dpdkLive) exec(timeout time.Duration, name string, args ...string) (string, error) {
	return runCmd(timeout, "ip", append([]string{"netns", "exec", l.ns, name}, args...)...)
}

// statValue finds "key=N" on the serve output line starting with prefix.
func (l *dpdkLive) statValue(prefix, key string) int64 {
	return livetest.ServeStat(l.output(), prefix, key)
}

// runCmd runs a command with a timeout and returns its combined output.
func runCmd(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}
