package preloadtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/internal/stackproc"
)

// build builds preload/ once (plain and ASan).
var build = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "svpre")
	if err != nil {
		return "", err
	}
	for _, args := range [][]string{{dir}, {dir, "--asan"}} {
		if out, err := exec.Command("../build", args...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("preload/build %v: %v\n%s", args, err, out)
		}
	}
	return dir, nil
})

func needBuild() string {
	if _, err := exec.LookPath("gcc"); err != nil {
		Skip("needs gcc")
	}
	dir, err := build()
	Expect(err).NotTo(HaveOccurred())
	return dir
}

// run runs a program with a bounded time and returns its standard output
// (the trace) and error.
func run(ctx context.Context, env []string, name string, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	// A program that forks: at the deadline its whole process group
	// goes (it is ours: Setpgid makes the program its leader), and Wait
	// does not wait for children still holding the output pipes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// pair runs echotrace's server and client at once and returns both
// traces.
func pair(serverEnv, clientEnv []string, bin, ip string, port int) (srv, cli string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var sErr error
	var sStderr string
	wg.Add(1)
	go func() {
		defer wg.Done()
		srv, sStderr, sErr = run(ctx, serverEnv, bin, "server", fmt.Sprint(port))
	}()
	cli, cStderr, cErr := run(ctx, clientEnv, bin, "client", ip, fmt.Sprint(port))
	wg.Wait()
	Expect(sErr).NotTo(HaveOccurred(), "server: %s\n%s", srv, sStderr)
	Expect(cErr).NotTo(HaveOccurred(), "client: %s\n%s", cli, cStderr)
	return srv, cli
}

// stackServer serves preloaded processes on runtime r at a new socket.
func stackServer(srv *stackproc.Server) string {
	d, err := os.MkdirTemp("", "svpt")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, d)
	path := filepath.Join(d, "stack.sock")
	Expect(srv.Listen(path)).To(Succeed())
	go func() { _ = srv.Serve() }()
	DeferCleanup(srv.Close)
	return path
}

// program returns the path of a built C test program and the LD_PRELOAD
// value that runs it on Savanna's stack: the plain build, or the
// AddressSanitizer one, whose runtime must be preloaded first.
func program(dir, name string, asan bool) (bin, preload string) {
	bin, lib := filepath.Join(dir, name), filepath.Join(dir, "libsavanna_preload.so")
	if !asan {
		return bin, lib
	}
	out, err := exec.Command("gcc", "-print-file-name=libasan.so").Output()
	Expect(err).NotTo(HaveOccurred())
	lib = filepath.Join(dir, "asan", "libsavanna_preload.so")
	return filepath.Join(dir, "asan", name), strings.TrimSpace(string(out)) + " " + lib
}

// twoStacks returns two stack processes' servers joined by an in-memory
// wire (two hosts, no kernel in the data path) and their sockets.
func twoStacks() (a, b *stackproc.Server, pa, pb string) {
	rp, err := livetest.NewRingPair(1, 1)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(rp.Stop)
	a, err = stackproc.NewServer(stackproc.Config{Runtime: rp.A})
	Expect(err).NotTo(HaveOccurred())
	b, err = stackproc.NewServer(stackproc.Config{Runtime: rp.B})
	Expect(err).NotTo(HaveOccurred())
	return a, b, stackServer(a), stackServer(b)
}

var _ = Describe("echotrace, a blocking echo client and server", func() {
	DescribeTable("returns the same from every call on Linux's stack and preloaded on Savanna's, two stack processes on an in-memory wire",
		func(asan bool) {
			dir := needBuild()
			bin, preload := program(dir, "echotrace", asan)
			linuxSrv, linuxCli := pair(nil, nil, bin, "127.0.0.1", 17711)

			a, b, pa, pb := twoStacks()
			svSrv, svCli := pair([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa},
				[]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}, bin, "10.9.0.1", 17711)

			Expect(svSrv).To(Equal(linuxSrv), "the server's trace")
			Expect(svCli).To(Equal(linuxCli), "the client's trace")
			Expect(svSrv).NotTo(ContainSubstring("FAIL"))
			Eventually(func() int { return len(a.Stats().Processes) + len(b.Stats().Processes) }).Should(Equal(2))
			Eventually(func() bool {
				for _, s := range []*stackproc.Server{a, b} {
					for _, p := range s.Stats().Processes {
						if !p.Exited {
							return false
						}
					}
				}
				return true
			}).WithTimeout(10 * time.Second).Should(BeTrue())
			sa, sb := a.Stats(), b.Stats()
			GinkgoWriter.Print(stackproc.FormatStats(sa), stackproc.FormatStats(sb))
			ps := sa.Processes[0]
			Expect(ps.Accepted).To(BeEquivalentTo(1))
			Expect(ps.RxBytes).To(BeEquivalentTo(ps.TxBytes + 6*4)) // the length prefixes are not echoed
			Expect(ps.Refused).To(HaveKeyWithValue("setsockopt", uint64(1)), "the bogus option")
			Expect(ps.Calls).To(HaveKey("read"))
			Expect(sb.Processes[0].ConnectFailed).To(BeNumerically(">=", 1), "connect with no listener (and any retry while the server was starting)")
		},
		Entry("built plainly", false),
		Entry("under AddressSanitizer", true),
	)
})
