//go:build linux

package tap_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
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
		if out, err := livetest.Run(10*time.Minute, "apt-get", "update"); err != nil {
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

// live is one namespace with simrun serve running in it on a TAP.
type live struct {
	*livetest.Serve
	ready string
}

var nsSeq int

// startServe makes the namespace sv-<pid>-<n>, runs simrun serve in it
// on a TAP, waits for its ready line and gives the kernel side its
// address. Cleanup stops serve (SIGTERM, then kill) and deletes the
// namespace.
func startServe(app string, port int, extra ...string) *live {
	nsSeq++
	s := livetest.StartServeInNamespace(fmt.Sprintf("sv-%d-%d", os.Getpid(), nsSeq), simrun(), 20*time.Second,
		append([]string{"--tap", tapName, "--ip", stackCIDR, "--app", app, "--port", fmt.Sprint(port)}, extra...)...)
	out, err := s.Exec(10*time.Second, "ip", "addr", "add", kernelCIDR, "dev", tapName)
	Expect(err).NotTo(HaveOccurred(), out)
	return &live{Serve: s, ready: s.Ready()}
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
		f, err := os.Open(filepath.Join("/var/run/netns", l.NS))
		Expect(err).NotTo(HaveOccurred())
		defer f.Close()
		Expect(unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)).To(Succeed())
		fn()
	}()
	<-done
}
