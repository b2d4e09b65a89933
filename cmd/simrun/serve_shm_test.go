//go:build !dpdk

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
)

// shmServe is one simrun serve on a shared-memory link, run as a process
// of its own (no namespace: the link needs no kernel interface).
type shmServe struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    strings.Builder
	ready  chan struct{}
	exited chan error
}

// startShmServe starts "bin serve --backend shm" on path as role, with
// the stack at ip and a stack process for preloaded programs on sock,
// and waits for its ready line; the spec's end stops it by PID.
func startShmServe(bin, path, role, ip, sock string) *shmServe {
	s := &shmServe{ready: make(chan struct{}), exited: make(chan error, 1)}
	s.cmd = exec.Command(bin, "serve", "--backend", "shm", "--shm", path, "--shm-role", role,
		"--ip", ip, "--app", "echo", "--port", "7", "--preload", sock, "--ctl", "none", "--log-level", "warn")
	s.cmd.Stderr = GinkgoWriter
	stdout, err := s.cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(s.cmd.Start()).To(Succeed())
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		first := true
		for sc.Scan() {
			s.mu.Lock()
			s.out.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if first {
				first = false
				close(s.ready)
			}
		}
		s.exited <- s.cmd.Wait()
	}()
	DeferCleanup(s.stop)
	Eventually(s.ready).WithTimeout(20*time.Second).Should(BeClosed(), "serve --shm-role %s is ready", role)
	return s
}

// stop sends SIGTERM and waits (killing it after 15 s); it returns what
// serve printed, its final statistics included.
func (s *shmServe) stop() string {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// redisInfoInt reads "key:N" from redis-cli INFO's output, -1 when
// absent.
func redisInfoInt(info, key string) int64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `:(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

var _ = Describe("simrun serve --backend shm", func() {
	It("refuses a link without its file or role, and names the file it cannot make", func() {
		code, _, errOut := simrun("serve", "--backend", "shm", "--ip", "10.9.0.1/24", "--app", "kv", "--port", "6379")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--shm PATH and --shm-role create|attach are required with --backend shm"))
		code, _, errOut = simrun("serve", "--backend", "shm", "--shm", "/x", "--shm-role", "both", "--ip", "10.9.0.1/24", "--app", "kv", "--port", "6379")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--shm-role create|attach"))
		code, _, errOut = simrun("serve", "--backend", "shm", "--shm", "/nonexistent/dir/link", "--shm-role", "create",
			"--ip", "10.9.0.1/24", "--app", "kv", "--port", "6379", "--ctl", "none")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("shmlink create: open /nonexistent/dir/link"))
	})
})

var _ = Describe("two simrun serve --preload on one shared-memory link", Label("live"), func() {
	It("runs a real redis-benchmark -n 20000 -c 20 -t set,get against a real redis-server, each preloaded on its own stack process, every request answered, no kernel in the data path", func() {
		for _, p := range []string{"gcc", "redis-server", "redis-benchmark", "redis-cli"} {
			if _, err := exec.LookPath(p); err != nil {
				Skip(p + " not installed (.ci/run installs gcc, redis-server and redis-tools)")
			}
		}
		dir, err := preloadBuild()
		Expect(err).NotTo(HaveOccurred())
		liveOnce.Do(func() { liveBin, _, liveErr = livetest.BuildSimrun("SAVANNA_SIMRUN") })
		Expect(liveErr).NotTo(HaveOccurred())
		tmp := shortTempDir()
		shmDir := tmp
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			shmDir = "/dev/shm"
		}
		link := filepath.Join(shmDir, fmt.Sprintf("savanna-spec-%d", os.Getpid()))
		DeferCleanup(func() { _ = os.Remove(link) }) // serve removes it; a killed one would not
		sockA, sockB := filepath.Join(tmp, "a.sock"), filepath.Join(tmp, "b.sock")
		a := startShmServe(liveBin, link, "create", "10.9.0.1/24", sockA)
		b := startShmServe(liveBin, link, "attach", "10.9.0.2/24", sockB)

		lib := filepath.Join(dir, "libsavanna_preload.so")
		onStack := func(sock string) []string {
			return append(os.Environ(), "LD_PRELOAD="+lib, "SAVANNA_STACK="+sock)
		}
		srv := exec.Command("redis-server", "--port", "6379", "--save", "", "--appendonly", "no", "--protected-mode", "no",
			"--daemonize", "no", "--dir", tmp, "--logfile", "")
		srv.Env = onStack(sockA)
		srvOut := &strings.Builder{}
		srv.Stdout, srv.Stderr = srvOut, srvOut
		Expect(srv.Start()).To(Succeed())
		srvDone := make(chan struct{})
		go func() { _ = srv.Wait(); close(srvDone) }()
		DeferCleanup(func() {
			_ = srv.Process.Signal(syscall.SIGTERM)
			select {
			case <-srvDone:
			case <-time.After(10 * time.Second):
				_ = srv.Process.Kill()
				<-srvDone
			}
		})
		cli := func(timeout time.Duration, name string, args ...string) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			c := exec.CommandContext(ctx, name, args...)
			c.Env = onStack(sockB)
			out, err := c.CombinedOutput()
			return string(out), err
		}
		Eventually(func() string {
			out, _ := cli(5*time.Second, "redis-cli", "-h", "10.9.0.1", "-p", "6379", "ping")
			return strings.TrimSpace(out)
		}).WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).Should(Equal("PONG"), "redis-server answers over the link\n%s", srvOut)

		const n = 20000
		out, err := cli(120*time.Second, "redis-benchmark", "-h", "10.9.0.1", "-p", "6379",
			"-n", strconv.Itoa(n), "-c", "20", "-t", "set,get", "--csv")
		Expect(err).NotTo(HaveOccurred(), "redis-benchmark: %s", out)
		GinkgoWriter.Print(out)
		// redis-benchmark prints a test's line only once all -n replies
		// came.
		Expect(out).To(MatchRegexp(`(?m)^"SET","[0-9.]+"`))
		Expect(out).To(MatchRegexp(`(?m)^"GET","[0-9.]+"`))
		info, err := cli(10*time.Second, "redis-cli", "-h", "10.9.0.1", "-p", "6379", "info", "stats")
		Expect(err).NotTo(HaveOccurred(), info)
		// Every SET and GET executed (and the benchmark's CONFIG GETs
		// and the PINGs besides).
		Expect(redisInfoInt(info, "total_commands_processed")).To(BeNumerically(">=", 2*n))

		outA, outB := a.stop(), b.stop()
		GinkgoWriter.Print(outA, outB)
		for _, o := range []string{outA, outB} {
			Expect(livetest.ServeStat(o, "nic xstats", "rx_good_packets")).To(BeNumerically(">", 2*n), "frames crossed the link")
			for _, k := range []string{"rx_bad_descriptors", "rx_bad_ring_index", "tx_bad_ring_index", "rx_mbuf_allocation_errors", "peer_gone"} {
				Expect(livetest.ServeStat(o, "nic xstats", k)).To(BeZero(), k)
			}
		}
		Expect(outA).To(MatchRegexp(`preload process pid=\d+ comm=redis-server .*accepted=(4[1-9]|[5-9]\d|\d{3,})`), "the benchmark's 2x20 connections and more")
		Expect(outB).To(MatchRegexp(`preload process pid=\d+ comm=redis-benchmar`))
	})
})
