package checkmodel

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"
)

// WrkRun is one live wrk run against nginx.
type WrkRun struct {
	Namespace string
	Clients   int
	// Duration is wrk's -d, in whole seconds.
	Duration time.Duration
	// Script is wrk.lua's path (-s).
	Script string
	// CPU pins wrk (-1: not pinned).
	CPU int
	// Timeout bounds the run: wrk is killed after it.
	Timeout time.Duration
}

// wrkArgv is wrk with one thread (-t1: one event loop, as the twin's
// wrk on one core) and Clients keep-alive connections, one request in
// flight on each (wrk pipelines only when a script's request() returns
// several), its descriptor limit raised for them (prlimit: wrk takes
// what it is given, and 1,000 connections pass a 1,024 soft limit with
// its epoll and standard files). wrk's --timeout stays its default, 2 s:
// a response slower than that is counted as a timeout.
func wrkArgv(r WrkRun) []string {
	nofile := strconv.Itoa(2*r.Clients + 256)
	secs := int(r.Duration / time.Second)
	return pinned(r.CPU, "prlimit", "--nofile="+nofile+":"+nofile, "--",
		"wrk", "-t1", "-c", strconv.Itoa(r.Clients), "-d", strconv.Itoa(secs)+"s", "--latency", "-s", r.Script,
		"http://"+ServerIP+":"+strconv.Itoa(NginxPort)+nginxPath)
}

// RunWrk runs wrk against nginx and returns the point with the server's
// CPU over the run (/proc/PID/stat of each of pids, the master and its
// worker, before and after) and wrk's own (its rusage at exit; ip netns
// exec, taskset and prlimit each exec into the next, so the process is
// wrk).
func RunWrk(ctx context.Context, r WrkRun, pids []int) (Point, error) {
	pt := Point{System: SystemNginx, Command: "GET", Clients: r.Clients}
	cpu := func() (time.Duration, error) {
		var sum time.Duration
		for _, pid := range pids {
			d, err := ProcCPU(pid)
			if err != nil {
				return 0, err
			}
			sum += d
		}
		return sum, nil
	}
	before, err := cpu()
	if err != nil {
		return pt, fmt.Errorf("nginx CPU before: %w", err)
	}
	bctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	cmd := Exec(bctx, r.Namespace, wrkArgv(r)...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	after, err := cpu()
	if err != nil {
		return pt, fmt.Errorf("nginx CPU after (did nginx exit?): %w", err)
	}
	if ctx.Err() != nil {
		return pt, fmt.Errorf("stopped: %w", ctx.Err())
	}
	if bctx.Err() != nil {
		return pt, fmt.Errorf("wrk -c %d -d %v: killed after %v", r.Clients, r.Duration, r.Timeout)
	}
	if runErr != nil {
		return pt, fmt.Errorf("wrk -c %d: %w: %s", r.Clients, runErr, tail(stderr.String()+stdout.String()))
	}
	w, err := ParseWrk(stdout.Bytes())
	if err != nil {
		return pt, fmt.Errorf("%w; stderr: %s", err, tail(stderr.String()))
	}
	if w.Requests == 0 {
		return pt, fmt.Errorf("wrk -c %d: no response in %v: %s", r.Clients, r.Duration, tail(stdout.String()))
	}
	pt.Requests = float64(w.Requests)
	pt.RPS = w.RPS()
	// wrk 4 corrects its latency histogram for coordinated omission
	// before it prints it or hands it to done() (wrk.c's stats_correct:
	// every response slower than twice the expected interval adds
	// synthetic samples), so its mean is not the mean response time the
	// twin measures. On wrk's closed loop, one request in flight per
	// connection, Little's law gives that mean from the throughput.
	pt.MeanMS = littleMeanMS(r.Clients, pt.RPS)
	pt.P99MS = w.P99US / 1e3
	srvCPU := after - before
	client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	pt.ServerCPUus = float64(srvCPU.Microseconds()) / pt.Requests
	pt.ClientCPUus = float64(client.Microseconds()) / pt.Requests
	if n := w.Errors(); n > 0 {
		pt.Notes = append(pt.Notes, fmt.Sprintf("wrk counted %d errors (connect %d, read %d, write %d, status %d, timeout %d)",
			n, w.ConnectErrors, w.ReadErrors, w.WriteErrors, w.StatusErrors, w.Timeouts))
	}
	const coarse = 20 * time.Second / userHZ
	if srvCPU < coarse {
		pt.Notes = append(pt.Notes, fmt.Sprintf("server CPU over %v, counted in 10 ms ticks: coarse", srvCPU))
	}
	return pt, nil
}
