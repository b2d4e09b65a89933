package checkmodel

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Server is a server process this package started in a namespace; it is
// stopped by its PID only.
type Server struct {
	cmd  *exec.Cmd
	done chan error
	// PID is the server's process: ip netns exec and taskset exec into
	// it, so it is the server itself.
	PID int
	log *tailBuffer
}

// tailBuffer keeps the last bytes a process wrote, for its error.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = append(t.b[:0], t.b[len(t.b)-4096:]...)
	}
	return len(p), nil
}

// pinned prefixes argv with taskset -c cpu when cpu >= 0: each program on
// a core of its own, as the simulated twin places them.
func pinned(cpu int, argv ...string) []string {
	if cpu < 0 {
		return argv
	}
	return append([]string{"taskset", "-c", strconv.Itoa(cpu)}, argv...)
}

// StartServer starts argv in namespace ns and waits, at most wait, for a
// line of its output containing ready. The returned server must be
// stopped with Stop.
func StartServer(ctx context.Context, ns string, argv []string, ready string, wait time.Duration) (*Server, error) {
	return StartServerWatch(ctx, ns, argv, ready, wait, nil)
}

// StartServerWatch is StartServer that also gives watch (when not nil)
// every line the server prints, as it prints it, on a goroutine of its
// own: the caller counts what it must report (nginx's warnings).
func StartServerWatch(ctx context.Context, ns string, argv []string, ready string, wait time.Duration, watch func(line string)) (*Server, error) {
	cmd := Exec(context.Background(), ns, argv...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	s := &Server{cmd: cmd, done: make(chan error, 1), log: &tailBuffer{}}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", argv[0], err)
	}
	s.PID = cmd.Process.Pid
	go func() {
		err := cmd.Wait()
		pw.CloseWithError(io.EOF)
		s.done <- err
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = s.log.Write([]byte(line + "\n"))
			if watch != nil {
				watch(line)
			}
			if !sent && strings.Contains(line, ready) {
				found <- line
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-found:
		return s, nil
	case err := <-s.done:
		s.done <- err
		return nil, fmt.Errorf("%s exited before it was ready (%v): %s", argv[0], err, bytes.TrimSpace(s.log.b))
	case <-t.C:
		_ = s.Stop()
		return nil, fmt.Errorf("%s not ready after %v: %s", argv[0], wait, bytes.TrimSpace(s.log.b))
	case <-ctx.Done():
		_ = s.Stop()
		return nil, ctx.Err()
	}
}

// Stop ends the server: SIGTERM, and SIGKILL if it has not exited after
// five seconds. Only this process, by its PID.
func (s *Server) Stop() error {
	if s == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case err := <-s.done:
		s.done <- err
		return nil
	case <-t.C:
		_ = s.cmd.Process.Kill()
		err := <-s.done
		s.done <- err
		return errors.New("did not stop on SIGTERM within 5 s; killed")
	}
}

// Output is the last of what the server printed.
func (s *Server) Output() string { return string(s.log.b) }

// BenchConfig is one live redis-benchmark run.
type BenchConfig struct {
	Namespace string
	Command   string
	Clients   int
	Requests  int
	DataSize  int
	// CPU pins the benchmark (-1: not pinned).
	CPU int
	// Timeout bounds the run: the benchmark is killed after it.
	Timeout time.Duration
}

// RunBench runs redis-benchmark against the server and returns the point
// with the server's CPU over the run (/proc/PID/stat before and after)
// and the benchmark's own (its rusage at exit: the same utime + stime).
func RunBench(ctx context.Context, c BenchConfig, server *Server, system string) (Point, error) {
	pt := Point{System: system, Command: strings.ToUpper(c.Command), Clients: c.Clients}
	before, err := ProcCPU(server.PID)
	if err != nil {
		return pt, fmt.Errorf("server CPU before: %w", err)
	}
	bctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	argv := pinned(c.CPU, "redis-benchmark", "-h", ServerIP, "-p", "6379",
		"-c", strconv.Itoa(c.Clients), "-n", strconv.Itoa(c.Requests), "-d", strconv.Itoa(c.DataSize),
		"-t", strings.ToLower(c.Command), "--csv", "--precision", "3")
	cmd := Exec(bctx, c.Namespace, argv...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	after, err := ProcCPU(server.PID)
	if err != nil {
		return pt, fmt.Errorf("server CPU after (did the server exit? %s): %w", strings.TrimSpace(server.Output()), err)
	}
	if ctx.Err() != nil {
		return pt, fmt.Errorf("stopped: %w", ctx.Err())
	}
	if bctx.Err() != nil {
		return pt, fmt.Errorf("redis-benchmark %s -c %d -n %d: killed after %v", pt.Command, c.Clients, c.Requests, c.Timeout)
	}
	if runErr != nil {
		return pt, fmt.Errorf("redis-benchmark %s -c %d: %w: %s", pt.Command, c.Clients, runErr, tail(stderr.String()))
	}
	rs, err := ParseCSV(stdout.Bytes())
	if err != nil {
		return pt, fmt.Errorf("%w; stderr: %s", err, tail(stderr.String()))
	}
	r, ok := Find(rs, pt.Command)
	if !ok {
		return pt, fmt.Errorf("redis-benchmark printed no %s row: %s", pt.Command, tail(stdout.String()))
	}
	pt.Requests = float64(c.Requests)
	pt.RPS, pt.MeanMS, pt.P99MS = r.RPS, r.AvgMS, r.P99MS
	srvCPU := after - before
	client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	pt.ServerCPUus = float64(srvCPU.Microseconds()) / pt.Requests
	pt.ClientCPUus = float64(client.Microseconds()) / pt.Requests
	// /proc counts in ticks of 10 ms: below 20 ticks the server's CPU
	// figure is coarser than the 5% the bands need. (The benchmark's
	// rusage is in microseconds.)
	const coarse = 20 * time.Second / userHZ
	if srvCPU < coarse {
		pt.Notes = append(pt.Notes, fmt.Sprintf("server CPU over %v, counted in 10 ms ticks: coarse", srvCPU))
	}
	return pt, nil
}

// tail is the end of a program's output, for an error.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		s = "..." + s[len(s)-400:]
	}
	return s
}

// redisServerArgv is Debian's redis-server with nothing written to disk
// (no RDB, no AOF), listening on ServerIP only, logging to standard
// output (redis.conf: logfile "" is stdout).
func redisServerArgv(dir string) []string {
	return []string{"redis-server", "--port", "6379", "--bind", ServerIP, "--protected-mode", "no",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "", "--dir", dir}
}

// redisVersion is redis-server's first line of --version.
func redisVersion(ctx context.Context, prog string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, prog, "--version").Output()
	if err != nil {
		return prog + ": " + err.Error()
	}
	return strings.TrimSpace(string(out))
}

// ensureDir is a temporary folder for the server's working directory.
func ensureDir() (string, func(), error) {
	d, err := os.MkdirTemp("", "savanna-check-model-")
	if err != nil {
		return "", nil, err
	}
	return d, func() { _ = os.RemoveAll(d) }, nil
}
