package checkmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/savanna-sim/savanna/internal/calibrate"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/sim/cost"
)

// Config is one check-model run.
type Config struct {
	// Clients are the numbers of clients, one point each per command.
	Clients []int
	// Commands are redis-benchmark's tests, run in this order (GET after
	// SET finds the key SET wrote).
	Commands []string
	// Requests per point (redis-benchmark -n).
	Requests int
	// DataSize is SET's value size in bytes (redis-benchmark -d).
	DataSize int
	// CostFile prices both simulated hosts ("" for the default prices).
	CostFile string
	// Workloads are what runs live, in this order (Workloads lists
	// them); none given is WorkloadRedis alone.
	Workloads []string
	// Simrun is the binary WorkloadSavanna runs simrun serve with.
	Simrun string
	// Duration is each live nginx point's wrk run (-d), whole seconds.
	Duration time.Duration
	// Timeout bounds each live redis-benchmark and wrk run.
	Timeout time.Duration
	// Log gets a line per step (nil: none).
	Log io.Writer
}

// Result is a check-model run: both sides of every point and the rows
// comparing them.
type Result struct {
	Config  Config
	Machine calibrate.Machine
	// Before and After are the machine's load around the live runs, and
	// Busy why it was too busy for stable figures (calibrate's rule).
	Before, After calibrate.LoadSample
	Busy          []string
	Started       time.Time
	Elapsed       time.Duration
	// Versions are the real programs' own words on their version.
	Versions []string
	// Pinned says each live program ran on a CPU of its own (taskset).
	Pinned    bool
	Real, Sim []Point
	Rows      []Row
	// Skipped says what was not run, and why.
	Skipped []string
	// CostName is the cost file's name (calibrate's ends in -noisy when
	// the machine was busy).
	CostName string
}

// Run measures every point live, then simulates each (after, so the
// in-process simulation does not take CPU from the live run), and
// compares them. The namespaces and every process it starts are gone
// when it returns, on an error or a cancelled ctx (a signal) too.
func Run(ctx context.Context, c Config) (*Result, error) {
	if len(c.Commands) == 0 {
		c.Commands = []string{"SET", "GET"}
	}
	if len(c.Workloads) == 0 {
		c.Workloads = []string{WorkloadRedis}
	}
	if c.Has(WorkloadNginx) && c.Duration == 0 {
		c.Duration = 5 * time.Second
	}
	if err := checkConfig(c); err != nil {
		return nil, err
	}
	if err := CheckHost(); err != nil {
		return nil, err
	}
	if err := checkPrograms(c); err != nil {
		return nil, err
	}
	res := &Result{Config: c, Started: time.Now(), Machine: calibrate.ThisMachine(time.Now())}
	if c.CostFile != "" {
		m, err := cost.For(costops.Table()).Load(c.CostFile)
		if err != nil {
			return nil, fmt.Errorf("--cost: %w", err)
		}
		res.CostName = m.Name()
	}
	probe := calibrate.ProcProbe{Window: 500 * time.Millisecond, Loop: 100 * time.Millisecond}
	if s, err := probe.Sample(); err == nil {
		res.Before = s
		res.Busy = append(res.Busy, prefix("before: ", calibrate.DefaultRule().Busy(s, true))...)
	}
	if c.Has(WorkloadRedis) || c.Has(WorkloadSavanna) {
		res.Versions = append(res.Versions, redisVersion(ctx, "redis-server"), redisVersion(ctx, "redis-benchmark"))
	}
	if c.Has(WorkloadNginx) {
		res.Versions = append(res.Versions, nginxVersion(ctx), wrkVersion(ctx))
	}
	// One program per CPU, as the twin gives each a core of its own; on
	// one CPU they share it.
	srvCPU, cliCPU := -1, -1
	if runtime.NumCPU() >= 2 {
		srvCPU, cliCPU, res.Pinned = 1, 0, true
	}
	// script is wrk.lua's path, nlog nginx's log, once the nginx run
	// has made them.
	var script string
	var nlog *nginxLog
	live := func(system string, argv []string, ready string) error {
		pair, err := NewPair(ctx, fmt.Sprintf("scm%d", os.Getpid()%100000))
		if err != nil {
			return err
		}
		defer pair.Close()
		if system == SystemSavanna {
			if err := savannaSetup(ctx, pair); err != nil {
				return err
			}
		}
		var watch func(string)
		if system == SystemNginx {
			watch = nlog.watch
		}
		srv, err := StartServerWatch(ctx, pair.Server, pinned(srvCPU, argv...), ready, 30*time.Second, watch)
		if err != nil {
			return err
		}
		defer srv.Stop()
		if system == SystemSavanna {
			if err := savannaJoin(ctx, pair); err != nil {
				return err
			}
		}
		if system == SystemNginx {
			return nginxPoints(ctx, c, pair, srv, script, nlog, cliCPU, res)
		}
		for _, n := range c.Clients {
			for _, cmd := range c.Commands {
				if err := ctx.Err(); err != nil {
					return err
				}
				logf(c.Log, "live %s %s, %d clients, %d requests", system, cmd, n, c.Requests)
				pt, err := RunBench(ctx, BenchConfig{Namespace: pair.Client, Command: cmd, Clients: n, Requests: c.Requests,
					DataSize: c.DataSize, CPU: cliCPU, Timeout: c.Timeout}, srv, system)
				if err != nil {
					return fmt.Errorf("live %s: %w", pt.Key(), err)
				}
				res.Real = append(res.Real, pt)
			}
		}
		return nil
	}
	dir, cleanup, err := ensureDir()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if c.Has(WorkloadRedis) {
		if err := live(SystemRedis, redisServerArgv(dir), "Ready to accept connections"); err != nil {
			return nil, err
		}
	}
	if c.Has(WorkloadSavanna) {
		// Savanna's live run needs a TAP; where it cannot run, the redis
		// points stand and the report says why the others are missing.
		n := len(res.Real)
		err := savannaPossible()
		if err == nil {
			err = live(SystemSavanna, savannaArgv(c.Simrun), "savanna: serving kv")
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			res.Real = res.Real[:n]
			res.Skipped = append(res.Skipped, "simrun serve --app kv live: "+err.Error())
		}
	}
	if c.Has(WorkloadNginx) {
		// A folder of its own, which nginx's worker (nobody) may read.
		ndir, done, err := ensureDir()
		if err != nil {
			return nil, err
		}
		defer done()
		conf, s, err := nginxFiles(ndir, slices.Max(c.Clients))
		if err != nil {
			return nil, err
		}
		script, nlog = s, &nginxLog{}
		if err := live(SystemNginx, nginxArgv(ndir, conf), nginxReady); err != nil {
			return nil, err
		}
	}
	if s, err := probe.Sample(); err == nil {
		res.After = s
		res.Busy = append(res.Busy, prefix("after: ", calibrate.DefaultRule().Busy(s, false))...)
	}
	for _, real := range res.Real {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		logf(c.Log, "simulated %s", real.Key())
		sim, err := RunSim(SimConfig{System: real.System, Command: real.Command, Clients: real.Clients,
			Requests: c.Requests, DataSize: c.DataSize, CostFile: c.CostFile})
		if err != nil {
			return nil, err
		}
		res.Sim = append(res.Sim, sim)
		res.Rows = append(res.Rows, Compare(real, sim)...)
	}
	res.Elapsed = time.Since(res.Started)
	return res, nil
}

// The workloads check-model runs live, in the order it runs them.
const (
	// WorkloadRedis is redis-server against redis-benchmark.
	WorkloadRedis = "redis"
	// WorkloadSavanna is simrun serve --app kv against redis-benchmark.
	WorkloadSavanna = "savanna"
	// WorkloadNginx is nginx serving a static file against wrk: the
	// held-out workload.
	WorkloadNginx = "nginx"
)

// Workloads lists every workload, in run order.
func Workloads() []string { return []string{WorkloadRedis, WorkloadSavanna, WorkloadNginx} }

// Has says the run includes workload w (no workload given is redis
// alone, as Run runs it).
func (c Config) Has(w string) bool {
	if len(c.Workloads) == 0 {
		return w == WorkloadRedis
	}
	for _, x := range c.Workloads {
		if x == w {
			return true
		}
	}
	return false
}

// checkPrograms refuses, naming the Debian package, a program a chosen
// workload needs that is not installed.
func checkPrograms(c Config) error {
	type prog struct{ prog, pkg string }
	need := []prog{{"taskset", "util-linux"}}
	if c.Has(WorkloadRedis) {
		need = append(need, prog{"redis-server", "redis-server"})
	}
	if c.Has(WorkloadRedis) || c.Has(WorkloadSavanna) {
		need = append(need, prog{"redis-benchmark", "redis-tools"})
	}
	if c.Has(WorkloadNginx) {
		need = append(need, prog{"nginx", "nginx"}, prog{"wrk", "wrk"}, prog{"prlimit", "util-linux"})
	}
	for _, p := range need {
		if _, err := exec.LookPath(p.prog); err != nil {
			return fmt.Errorf("%s not found: install Debian's %s (apt-get install %s)", p.prog, p.pkg, p.pkg)
		}
	}
	return nil
}

// checkConfig refuses what cannot run, naming the flag.
func checkConfig(c Config) error {
	var errs []error
	if len(c.Clients) == 0 {
		errs = append(errs, errors.New("--clients: give one number of clients or more"))
	}
	for _, n := range c.Clients {
		if n < 1 || n > 10000 {
			errs = append(errs, fmt.Errorf("--clients: %d is outside 1..10000", n))
		}
	}
	if c.Requests < 1 || c.Requests > 10_000_000 {
		errs = append(errs, fmt.Errorf("--requests: %d is outside 1..10000000", c.Requests))
	}
	if c.DataSize < 1 || c.DataSize > 1<<20 {
		errs = append(errs, fmt.Errorf("data size %d is outside 1..1048576", c.DataSize))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout: %v; give a positive duration", c.Timeout))
	}
	for _, cmd := range c.Commands {
		if u := strings.ToUpper(cmd); u != "SET" && u != "GET" {
			errs = append(errs, fmt.Errorf("command %q: expected SET or GET", cmd))
		}
	}
	known := map[string]bool{}
	for _, w := range Workloads() {
		known[w] = true
	}
	for _, w := range c.Workloads {
		if !known[w] {
			errs = append(errs, fmt.Errorf("--workloads: %q is not one of %s", w, strings.Join(Workloads(), ", ")))
		}
	}
	if c.Has(WorkloadSavanna) && c.Simrun == "" {
		errs = append(errs, errors.New("--savanna: no simrun binary to run serve with"))
	}
	if c.Has(WorkloadNginx) && (c.Duration < time.Second || c.Duration > time.Hour || c.Duration%time.Second != 0) {
		errs = append(errs, fmt.Errorf("--duration: %v; give whole seconds from 1s to 1h (wrk -d)", c.Duration))
	}
	return errors.Join(errs...)
}

func prefix(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "check-model: "+format+"\n", args...)
	}
}

// nginxPoints runs wrk at every number of connections against the nginx
// that srv is (its master), the server's CPU being the master's and its
// one worker's.
func nginxPoints(ctx context.Context, c Config, pair *Pair, srv *Server, script string, nlog *nginxLog, cliCPU int, res *Result) error {
	worker, err := nlog.worker(srv.PID)
	if err != nil {
		return err
	}
	for _, n := range c.Clients {
		_, before, _ := nlog.counts()
		if err := ctx.Err(); err != nil {
			return err
		}
		logf(c.Log, "live nginx GET, %d connections, %v", n, c.Duration)
		pt, err := RunWrk(ctx, WrkRun{Namespace: pair.Client, Clients: n, Duration: c.Duration, Script: script,
			CPU: cliCPU, Timeout: c.Timeout}, []int{srv.PID, worker})
		if err != nil {
			return fmt.Errorf("live %s: %w", pt.Key(), err)
		}
		if _, after, last := nlog.counts(); after > before {
			pt.Notes = append(pt.Notes, fmt.Sprintf("nginx logged %d warnings or errors, the last: %s", after-before, last))
		}
		res.Real = append(res.Real, pt)
	}
	return nil
}
