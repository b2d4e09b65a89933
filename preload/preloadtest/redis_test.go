package preloadtest

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/stackproc"
)

// benchRow is one redis-benchmark test's result (its --csv line).
type benchRow struct {
	Test          string
	RPS, P50, P99 float64
}

// parseBenchCSV reads redis-benchmark --csv output: a header, then
// "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms".
func parseBenchCSV(out string) ([]benchRow, error) {
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark --csv: %w", err)
	}
	var rows []benchRow
	for i, r := range recs {
		if i == 0 || len(r) < 7 {
			continue
		}
		var v [3]float64
		for j, k := range []int{1, 4, 6} {
			if v[j], err = strconv.ParseFloat(r[k], 64); err != nil {
				return nil, fmt.Errorf("redis-benchmark --csv line %d field %d: %w", i+1, k+1, err)
			}
		}
		rows = append(rows, benchRow{Test: r[0], RPS: v[0], P50: v[1], P99: v[2]})
	}
	return rows, nil
}

// startServer starts a long-running program (its own process group) and
// returns a function that stops it by PID (SIGTERM, then SIGKILL after
// 10 s) and returns its output.
func startServer(env []string, name string, args ...string) func() string {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	Expect(cmd.Start()).To(Succeed())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stopped := false
	stop := func() string {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		}
		return out.String()
	}
	DeferCleanup(func() { stop() })
	return stop
}

// redisBench runs redis-benchmark (bounded: -n requests, 120 s), with
// extra arguments after the common ones, and returns its rows.
func redisBench(env []string, host string, port int, n int, onFail func() string, extra ...string) []benchRow {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	// redis-benchmark spins when the server is not there yet: wait for
	// a PONG first (redis-cli, bounded).
	up := false
	for try := 0; try < 100 && !up; try++ {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		pong, _, _ := run(pctx, env, "redis-cli", "-h", host, "-p", strconv.Itoa(port), "ping")
		pcancel()
		up = strings.TrimSpace(pong) == "PONG"
		if !up {
			time.Sleep(100 * time.Millisecond)
		}
	}
	Expect(up).To(BeTrue(), "redis-server at %s:%d answers PING\n%s", host, port, onFail())
	out, stderr, err := run(ctx, env, "redis-benchmark", append([]string{"-h", host, "-p", strconv.Itoa(port),
		"-n", strconv.Itoa(n), "-c", "50", "-t", "set,get", "--csv"}, extra...)...)
	Expect(err).NotTo(HaveOccurred(), "redis-benchmark: %s\n%s\n%s", out, stderr, onFail())
	rows, err := parseBenchCSV(out)
	Expect(err).NotTo(HaveOccurred())
	Expect(rows).To(HaveLen(2), "SET and GET:\n%s", out)
	return rows
}

// benchTable formats the side-by-side table.
func benchTable(linux, savanna []benchRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s %-40s %12s %9s %9s\n", "test", "stack", "requests/s", "p50 ms", "p99 ms")
	for i := range linux {
		for _, r := range []struct {
			name string
			row  benchRow
		}{{"Linux (loopback)", linux[i]}, {"Savanna (two stack processes, ringdev)", savanna[i]}} {
			fmt.Fprintf(&b, "%-5s %-40s %12.0f %9.3f %9.3f\n", r.row.Test, r.name, r.row.RPS, r.row.P50, r.row.P99)
		}
	}
	b.WriteString("(a shared 2-core machine: the figures are indicative, never asserted)\n")
	return b.String()
}

const benchRequests = 20000

var _ = Describe("real redis-server preloaded", Label("live"), func() {
	It("answers every request of a real redis-benchmark -n 20000 -c 50 -t set,get, both preloaded on two stack processes, beside the same on Linux's loopback; a BGSAVE's fork leaves it serving, and a redis-benchmark --threads 4 after it", func() {
		for _, p := range []string{"redis-server", "redis-benchmark", "redis-cli"} {
			if _, err := exec.LookPath(p); err != nil {
				Skip(p + " not installed (.ci/run installs redis-server and redis-tools)")
			}
		}
		dir := needBuild()
		_, preload := program(dir, "echotrace", false)
		work := GinkgoT().TempDir()
		args := func(port int) []string {
			return []string{"--port", strconv.Itoa(port), "--save", "", "--appendonly", "no", "--protected-mode", "no",
				"--daemonize", "no", "--dir", work, "--logfile", ""}
		}

		stopLinux := startServer(nil, "redis-server", append(args(17741), "--bind", "127.0.0.1")...)
		linux := redisBench(nil, "127.0.0.1", 17741, benchRequests, func() string { return "" })
		stopLinux()

		a, b, pa, pb := twoStacks()
		stop := startServer([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa}, "redis-server", args(17742)...)
		savanna := redisBench([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}, "10.9.0.1", 17742, benchRequests, func() string {
			var sb strings.Builder
			for _, s := range []*stackproc.Server{a, b} {
				for _, p := range s.Stats().Processes {
					p.Sockets = nil
					fmt.Fprintf(&sb, "%+v\n", p)
				}
			}
			return sb.String()
		})
		// A BGSAVE: redis forks a child that inherits every socket (the
		// fork handler registers it with the stack); the server must go
		// on answering, and the child's save must succeed.
		cli := func(args ...string) string {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out, _, err := run(ctx, []string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}, "redis-cli",
				append([]string{"-h", "10.9.0.1", "-p", "17742"}, args...)...)
			Expect(err).NotTo(HaveOccurred())
			return out
		}
		Expect(cli("bgsave")).To(ContainSubstring("Background saving started"))
		Eventually(func() string { return cli("info", "persistence") }).WithTimeout(30 * time.Second).
			Should(And(ContainSubstring("rdb_bgsave_in_progress:0"), ContainSubstring("rdb_last_bgsave_status:ok")))
		Expect(cli("ping")).To(Equal("PONG\n"))
		// redis-benchmark --threads 4 (Redis 6's multi-threaded client,
		// as gazelle-redis models it): four ae loops in one preloaded
		// process, each with its own epoll, on the same stack process.
		threaded := redisBench([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}, "10.9.0.1", 17742, benchRequests, func() string { return "" }, "--threads", "4")
		GinkgoWriter.Printf("redis-benchmark --threads 4, preloaded: %+v\n", threaded)
		log := stop()
		GinkgoWriter.Printf("redis-server's log:\n%s", log)
		fmt.Fprint(GinkgoWriter, benchTable(linux, savanna))
		AddReportEntry("redis-benchmark, Linux against Savanna", benchTable(linux, savanna))
		if f := os.Getenv("SAVANNA_BENCH_OUT"); f != "" { // preload/bench-redis
			Expect(os.WriteFile(f, []byte(benchTable(linux, savanna)), 0o644)).To(Succeed())
		}
		for _, r := range savanna {
			Expect(r.RPS).To(BeNumerically(">", 0), "%s answered", r.Test)
		}
		allExited(a)
		st := a.Stats()
		var accepted, rx uint64
		for _, p := range st.Processes {
			accepted += p.Accepted
			rx += p.RxBytes
			Expect(p.Refused).NotTo(HaveKey("read"), "no read refused")
		}
		// redis-benchmark opens its 50 clients per test, and one more
		// connection to read the server's configuration.
		Expect(accepted).To(BeNumerically(">=", 100))
		// Every request was answered: redis-benchmark counts a test
		// only when all -n replies came; the server took at least every
		// SET's and GET's bytes.
		Expect(rx).To(BeNumerically(">", 2*benchRequests*20))
		GinkgoWriter.Print(stackproc.FormatStats(b.Stats())[:200])
	})
})
