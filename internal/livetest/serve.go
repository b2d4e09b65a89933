package livetest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Run runs a program with a timeout and returns what it printed, standard
// output and error together.
func Run(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// Serve is simrun serve running inside a network namespace, with its
// standard output collected.
type Serve struct {
	// NS is the namespace serve and the programs Exec starts run in.
	NS  string
	cmd *exec.Cmd

	mu  sync.Mutex
	out strings.Builder
	// log is serve's standard error (its slog lines), collected beside
	// the writer StartServe was given.
	log lockedBuilder

	exited   chan error
	stopOnce sync.Once
	stopErr  error
}

// StartServe starts "bin serve ARGS..." in namespace ns; serve's standard
// error goes to stderr.
func StartServe(ns, bin string, stderr io.Writer, args ...string) (*Serve, error) {
	s := &Serve{NS: ns, exited: make(chan error, 1)}
	s.cmd = exec.Command("ip", append([]string{"netns", "exec", ns, bin, "serve"}, args...)...)
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = io.MultiWriter(stderr, &s.log)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("simrun serve: %w", err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.mu.Lock()
			s.out.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
		s.exited <- s.cmd.Wait()
	}()
	return s, nil
}

// PID returns the PID of serve's process. "ip netns exec" runs the
// program in its own process (it execs it after setns, without a fork),
// so this is simrun's PID; where ip forks instead (batch mode), the
// caller finds the child under /proc/PID/task/*/children.
func (s *Serve) PID() int { return s.cmd.Process.Pid }

// Output returns what serve printed so far.
func (s *Serve) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// Log returns what serve logged to standard error so far.
func (s *Serve) Log() string { return s.log.String() }

// lockedBuilder is a strings.Builder safe for a writer and readers.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Ready returns serve's first line ("savanna: serving ..."), once printed.
func (s *Serve) Ready() string { return strings.SplitN(s.Output(), "\n", 2)[0] }

// Stop sends serve SIGTERM and waits for it, killing it after 15 s; it
// returns serve's exit error. Only the first call stops; later ones
// return the same error.
func (s *Serve) Stop() error {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case s.stopErr = <-s.exited:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
			s.stopErr = fmt.Errorf("simrun serve did not stop within 15 s of SIGTERM")
		}
	})
	return s.stopErr
}

// Exec runs a program inside the namespace (see Run).
func (s *Serve) Exec(timeout time.Duration, name string, args ...string) (string, error) {
	return Run(timeout, "ip", append([]string{"netns", "exec", s.NS, name}, args...)...)
}

// Stat finds "key=N" on the line of serve's final statistics that starts
// with "prefix:" (see ServeStat).
func (s *Serve) Stat(prefix, key string) int64 { return ServeStat(s.Output(), prefix, key) }

// RedisSetGet sets key to value with redis-cli against host from inside
// the namespace, reads it back, and fails unless both answer as Redis
// does.
func (s *Serve) RedisSetGet(host, key, value string) error {
	out, err := s.Exec(20*time.Second, "redis-cli", "-h", host, "SET", key, value)
	if err != nil || strings.TrimSpace(out) != "OK" {
		return fmt.Errorf("redis-cli SET: %v: %q", err, out)
	}
	out, err = s.Exec(20*time.Second, "redis-cli", "-h", host, "GET", key)
	if err != nil || strings.TrimSpace(out) != value {
		return fmt.Errorf("redis-cli GET: %v: %q, want %q", err, out, value)
	}
	return nil
}

// RedisBenchmarkTests returns the tests "redis-benchmark -t ping,set,get"
// runs, by the names its summary lines give them.
func RedisBenchmarkTests() []string { return []string{"PING_INLINE", "PING_MBULK", "SET", "GET"} }

// RedisBenchmark runs "redis-benchmark -t ping,set,get -n 100000 -c 50
// -q" against host:6379 from inside the namespace and returns each test's
// requests per second; it fails, with the output, unless every test of
// RedisBenchmarkTests() finished.
func (s *Serve) RedisBenchmark(timeout time.Duration, host string) (map[string]string, error) {
	out, err := s.Exec(timeout, "redis-benchmark", "-h", host, "-p", "6379",
		"-t", "ping,set,get", "-n", "100000", "-c", "50", "-q")
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark: %w\n%s", err, out)
	}
	rates := RedisBenchmarkRates(out)
	for _, t := range RedisBenchmarkTests() {
		if _, ok := rates[t]; !ok {
			return nil, fmt.Errorf("redis-benchmark did not finish %s:\n%s", t, out)
		}
	}
	return rates, nil
}
