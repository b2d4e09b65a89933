//go:build linux

package tap_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
	"golang.org/x/sys/unix"
)

// Addresses inside the test's namespace only: the kernel side of the TAP
// and Savanna's stack.
const (
	kernelCIDR = "10.77.0.1/24"
	stackIP    = "10.77.0.2"
	stackCIDR  = stackIP + "/24"
	tapName    = "sv0"
)

// liveSkip skips unless the test runs as root with ip netns.
func liveSkip() {
	if os.Geteuid() != 0 {
		Skip("live interop needs root (network namespaces, TAP)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		Skip("live interop needs iproute2's ip")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		Skip("live interop needs /dev/net/tun")
	}
}

// run runs a command with a timeout and returns its combined output.
func run(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

var (
	aptOnce sync.Once
	aptErr  error
)

// ensureTools installs redis-tools and iproute2 when missing (CI runs as
// root on Debian), after one apt-get update.
func ensureTools() {
	_, e1 := exec.LookPath("redis-benchmark")
	_, e2 := exec.LookPath("tc")
	if e1 == nil && e2 == nil {
		return
	}
	aptOnce.Do(func() {
		if out, err := run(10*time.Minute, "apt-get", "update"); err != nil {
			aptErr = fmt.Errorf("apt-get update: %v\n%s", err, out)
			return
		}
		cmd := exec.Command("apt-get", "install", "-y", "redis-tools", "iproute2")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			aptErr = fmt.Errorf("apt-get install: %v\n%s", err, out)
		}
	})
	Expect(aptErr).NotTo(HaveOccurred())
}

var (
	buildOnce sync.Once
	simrunBin string
	buildErr  error
)

// simrun returns a simrun binary: $SAVANNA_SIMRUN, or one built once for
// the suite.
func simrun() string {
	buildOnce.Do(func() {
		// The binary stays in its temporary folder for the process's
		// life: serve runs from it until the last spec.
		simrunBin, _, buildErr = livetest.BuildSimrun("SAVANNA_SIMRUN")
	})
	Expect(buildErr).NotTo(HaveOccurred())
	return simrunBin
}

// live is one namespace with simrun serve running in it.
type live struct {
	ns       string
	cmd      *exec.Cmd
	out      *lockedBuf
	ready    string
	exited   chan error
	stopOnce sync.Once
	stopErr  error
}

// stop sends SIGTERM to serve and waits for it (killing it after 15 s);
// it returns serve's exit error. Idempotent.
func (l *live) stop() error {
	l.stopOnce.Do(func() {
		_ = l.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case l.stopErr = <-l.exited:
		case <-time.After(15 * time.Second):
			_ = l.cmd.Process.Kill()
			<-l.exited
			l.stopErr = fmt.Errorf("simrun serve did not stop within 15 s of SIGTERM")
		}
		GinkgoWriter.Printf("simrun serve output:\n%s", l.out.String())
	})
	return l.stopErr
}

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) add(s string) { l.mu.Lock(); l.b.WriteString(s); l.mu.Unlock() }
func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var nsSeq int

// startServe makes the namespace sv-<pid>-<n>, runs simrun serve in it
// on a TAP, waits for its ready line and gives the kernel side its
// address. Cleanup stops serve (SIGTERM, then kill) and deletes the
// namespace.
func startServe(app string, port int, extra ...string) *live {
	bin := simrun()
	nsSeq++
	l := &live{ns: fmt.Sprintf("sv-%d-%d", os.Getpid(), nsSeq), out: &lockedBuf{}}
	if out, err := run(10*time.Second, "ip", "netns", "add", l.ns); err != nil {
		Skip(fmt.Sprintf("ip netns add failed (%v): %s", err, out))
	}
	DeferCleanup(func() {
		_, _ = run(10*time.Second, "ip", "netns", "del", l.ns)
	})
	_, err := run(10*time.Second, "ip", "netns", "exec", l.ns, "ip", "link", "set", "lo", "up")
	Expect(err).NotTo(HaveOccurred())

	args := append([]string{"netns", "exec", l.ns, bin, "serve", "--tap", tapName, "--ip", stackCIDR,
		"--app", app, "--port", fmt.Sprint(port)}, extra...)
	l.cmd = exec.Command("ip", args...)
	stdout, err := l.cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	l.cmd.Stderr = GinkgoWriter
	Expect(l.cmd.Start()).To(Succeed())
	l.exited = make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l.out.add(sc.Text() + "\n")
		}
		l.exited <- l.cmd.Wait()
	}()
	DeferCleanup(func() {
		Expect(l.stop()).To(Succeed(), "simrun serve must exit 0 on SIGTERM")
	})
	Eventually(l.out.String).WithTimeout(20*time.Second).WithPolling(20*time.Millisecond).
		Should(ContainSubstring("savanna: serving"), "waiting for the ready line")
	l.ready = strings.SplitN(l.out.String(), "\n", 2)[0]
	out, err := run(10*time.Second, "ip", "netns", "exec", l.ns, "ip", "addr", "add", kernelCIDR, "dev", tapName)
	Expect(err).NotTo(HaveOccurred(), out)
	return l
}

// exec runs a program inside the namespace.
func (l *live) exec(timeout time.Duration, name string, args ...string) (string, error) {
	return run(timeout, "ip", append([]string{"netns", "exec", l.ns, name}, args...)...)
}

// inNetns runs fn on an OS thread moved into the namespace: sockets fn
// creates belong to it and stay there when used from other goroutines.
// The thread is thrown away afterwards (never unlocked).
func (l *live) inNetns(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer GinkgoRecover()
		runtime.LockOSThread()
		f, err := os.Open(filepath.Join("/var/run/netns", l.ns))
		Expect(err).NotTo(HaveOccurred())
		defer f.Close()
		Expect(unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)).To(Succeed())
		fn()
	}()
	<-done
}

// statValue finds "key=N" on the serve output line starting with prefix.
func (l *live) statValue(prefix, key string) int64 {
	return livetest.ServeStat(l.out.String(), prefix, key)
}
