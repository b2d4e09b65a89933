// Command bench compares Savanna's stack with gVisor's netstack and the
// kernel's loopback. Run without -child it is the parent: it re-executes
// itself once per (network, workload, repetition) with GOMAXPROCS=2,
// collects each child's JSON result, and writes RESULTS.md and
// results.json:
//
//	cd bench && go run ./cmd/bench -out RESULTS.md -json results.json
//	cd bench && go run ./cmd/bench -quick -out RESULTS.md -json results.json
//
// Every network runs at each address family of -families (IPv4 and IPv6
// by default; the many workload at those of -many-families too).
// The savanna-rtc network is the savanna network with its applications
// run to completion on the lcores (stack/rtc), for bulk and pingpong.
// A child runs one workload on one network at one family (-child
// -network savanna -workload bulk -mtu 1500 -family 6) and prints its
// result as JSON; -cpuprofile and -memprofile write pprof profiles of
// its timed part.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/savanna-sim/savanna/bench/netw"
	"github.com/savanna-sim/savanna/bench/report"
	"github.com/savanna-sim/savanna/bench/work"
)

type options struct {
	out, jsonOut string
	quick        bool
	reps         int
	networks     string
	workloads    string
	mtus         string
	families     string
	manyFamilies string
	profileDir   string
	timeout      time.Duration

	child      bool
	network    string
	workload   string
	mtu        int
	family     int
	port       int
	cpuprofile string
	memprofile string

	echoServer int
	msgSize    int

	bulkMiB, pingPongs, setups, conns int
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "", "write the Markdown report here")
	flag.StringVar(&o.jsonOut, "json", "", "write the JSON report here")
	flag.BoolVar(&o.quick, "quick", false, "small sizes: every workload on every network in under two minutes")
	flag.IntVar(&o.reps, "reps", 0, "repetitions per cell (default 3; 1 with -quick)")
	flag.StringVar(&o.networks, "networks", "savanna,savanna-rtc,gvisor,kernel", "networks to run (savanna-rtc runs bulk and pingpong only)")
	flag.StringVar(&o.workloads, "workloads", "bulk,pingpong,setup,many", "workloads to run")
	flag.StringVar(&o.mtus, "mtus", "1500,9000", "link MTUs for savanna and gvisor bulk (the other workloads use the first)")
	flag.StringVar(&o.families, "families", "4,6", "address families to run (4, 6)")
	flag.StringVar(&o.manyFamilies, "many-families", "4,6", "address families of the many workload (those of -families only)")
	flag.StringVar(&o.profileDir, "profile-dir", "", "write a CPU and a heap profile of every child here")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "limit for one child")
	flag.BoolVar(&o.child, "child", false, "run one workload on one network and print its result (internal)")
	flag.StringVar(&o.network, "network", "savanna", "child: network")
	flag.StringVar(&o.workload, "workload", "bulk", "child: workload")
	flag.IntVar(&o.mtu, "mtu", 1500, "child: link MTU")
	flag.IntVar(&o.family, "family", 4, "child and echo server: address family (4 or 6)")
	flag.IntVar(&o.port, "port", 5001, "child: server port")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "child: write a CPU profile of the timed run")
	flag.StringVar(&o.memprofile, "memprofile", "", "child: write a heap profile after the run")
	flag.IntVar(&o.echoServer, "echo-server", 0, "run the kernel echo server of the many workload on this port (internal)")
	flag.IntVar(&o.msgSize, "msg", 64, "echo server: message size")
	flag.IntVar(&o.bulkMiB, "bulk-mib", 0, "override the bulk size (MiB), for profiling")
	flag.IntVar(&o.pingPongs, "pingpongs", 0, "override the ping-pong round trips, for profiling")
	flag.IntVar(&o.setups, "setups", 0, "override the setup connections, for profiling")
	flag.IntVar(&o.conns, "conns", 0, "override the many workload's connections, for profiling")
	flag.Parse()
	var err error
	switch {
	case o.echoServer != 0:
		err = work.ServeEchoProcess(o.family, uint16(o.echoServer), o.msgSize, os.Stdin, os.Stdout)
	case o.child:
		err = runChild(o)
	default:
		err = runParent(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func params(quick bool) work.Params {
	if quick {
		return work.Quick()
	}
	return work.Full()
}

// runChild runs one workload and prints the result as JSON on stdout.
func runChild(o options) error {
	wl, err := work.For(o.network, o.workload)
	if err != nil {
		return err
	}
	n, err := netw.New(netw.Config{Name: o.network, MTU: o.mtu, Family: o.family})
	if err != nil {
		return err
	}
	defer n.Close()
	if k, ok := n.(*netw.Kernel); ok && o.workload == "many" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		n = work.SplitKernel{Kernel: k, Command: func(port uint16, msg int) *exec.Cmd {
			cmd := exec.Command(self, "-echo-server", strconv.Itoa(int(port)), "-msg", strconv.Itoa(msg), "-family", strconv.Itoa(o.family))
			cmd.Stderr = os.Stderr
			return cmd
		}}
	}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	p := params(o.quick)
	if o.bulkMiB > 0 {
		p.BulkBytes = int64(o.bulkMiB) << 20
	}
	if o.pingPongs > 0 {
		p.PingPongs = o.pingPongs
	}
	if o.setups > 0 {
		p.Setups = o.setups
	}
	if o.conns > 0 {
		p.ManyConns = o.conns
	}
	peakProfiled := false
	if o.memprofile != "" && o.workload == "many" {
		// The many workload's memory is held only while its connections
		// are open: profile the heap in use then, not after the run.
		p.AtPeak = func() {
			if b, err := os.ReadFile("/proc/self/smaps"); err == nil {
				_ = os.WriteFile(o.memprofile+".smaps", b, 0o644)
			}
			runtime.GC() // the profile shows the heap as of the last GC
			f, ferr := os.Create(o.memprofile)
			if ferr == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
				peakProfiled = true
			}
		}
	}
	res, err := wl(ctx, n, p, uint16(o.port))
	if o.cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	if o.memprofile != "" && !peakProfiled {
		f, ferr := os.Create(o.memprofile)
		if ferr == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// runParent runs every cell's repetitions in fresh children.
func runParent(o options) error {
	if o.reps == 0 {
		o.reps = 3
		if o.quick {
			o.reps = 1
		}
	}
	var mtus []int
	for _, s := range split(o.mtus) {
		m, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("-mtus: %q: %w", s, err)
		}
		mtus = append(mtus, m)
	}
	if len(mtus) == 0 {
		return fmt.Errorf("-mtus: no MTU given")
	}
	families, err := parseFamilies("-families", o.families)
	if err != nil {
		return err
	}
	manyFamilies, err := parseFamilies("-many-families", o.manyFamilies)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	rep := &report.Report{Env: environment(o)}
	rep.Env.Savanna = map[int]netw.SavannaSizing{}
	for _, m := range mtus {
		rep.Env.Savanna[m] = netw.SizingFor(m)
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}
	port := 20000 + int(time.Now().Unix()%1000)*10
	start := time.Now()
	for _, wl := range split(o.workloads) {
		for _, nw := range split(o.networks) {
			if nw == work.RTCNetwork && !slices.Contains(work.RTCWorkloads(), wl) {
				continue // the report's note says so
			}
			cellMTUs := mtus[:1]
			if wl == "bulk" {
				cellMTUs = mtus
			}
			if nw == "kernel" {
				cellMTUs = mtus[:1]
			}
			cellFamilies := families
			if wl == "many" {
				cellFamilies = intersect(families, manyFamilies)
			}
			for _, m := range cellMTUs {
				// The families' repetitions alternate (IPv4, IPv6, IPv4,
				// ...), so that a change in the machine's load during
				// the run falls on both alike.
				cells := make([]*report.Cell, len(cellFamilies))
				for i, fam := range cellFamilies {
					cells[i] = &report.Cell{Workload: wl, Network: nw, MTU: m, Family: fam}
				}
				for r := 0; r < o.reps; r++ {
					for i, fam := range cellFamilies {
						cell := cells[i]
						port++
						args := []string{"-child", "-network", nw, "-workload", wl, "-mtu", strconv.Itoa(m),
							"-family", strconv.Itoa(fam), "-port", strconv.Itoa(port), "-timeout", o.timeout.String()}
						if o.quick {
							args = append(args, "-quick")
						}
						if o.profileDir != "" {
							base := filepath.Join(o.profileDir, fmt.Sprintf("%s-%s-%d-ipv%d-%d", wl, nw, m, fam, r))
							args = append(args, "-cpuprofile", base+".cpu.pprof", "-memprofile", base+".mem.pprof")
						}
						res, err := child(self, args, o.timeout+30*time.Second)
						if err != nil {
							cell.Failures = append(cell.Failures, err.Error())
							fmt.Fprintf(os.Stderr, "%-8s %-7s mtu %-5d ipv%d rep %d: FAILED: %v\n", wl, nw, m, fam, r, err)
							continue
						}
						if nw == "kernel" {
							cell.MTU = res.MTU
						}
						cell.Runs = append(cell.Runs, res)
						var figs []string
						for _, mt := range res.Metrics {
							figs = append(figs, fmt.Sprintf("%s %.4g %s", mt.Name, mt.Value, mt.Unit))
						}
						fmt.Fprintf(os.Stderr, "%-8s %-7s mtu %-5d ipv%d rep %d: %s; drops %s\n", wl, nw, m, fam, r, strings.Join(figs, ", "), res.Drops)
					}
				}
				for _, cell := range cells {
					cell.Aggregate()
					rep.Cells = append(rep.Cells, cell)
				}
			}
		}
	}
	rep.Env.LoadAfter = loadavg()
	if slices.Contains(split(o.networks), work.RTCNetwork) {
		note := "savanna-rtc is the savanna network (the same two stacks, link and sizing) with its applications run to completion on the lcores (stack/rtc: handlers called by the lcore that polls the connection, reading and writing TCP's buffers with no socket rings and no goroutine hand-off), the lcores spinning and parking as savanna's do, their spin counted in the CPU figures; " + work.RTCNote
		rep.Env.Notes = append(rep.Env.Notes, note)
	}
	// The run itself keeps about GOMAXPROCS threads busy, so the load
	// after it may reach the cores without anything else running.
	if busy(rep.Env.LoadBefore, float64(rep.Env.Cores)/2) || busy(rep.Env.LoadAfter, float64(rep.Env.Cores)+0.5) {
		rep.Env.Notes = append(rep.Env.Notes, fmt.Sprintf("the machine was busy while this ran (load average %s before, %s after, on %d cores): other programs shared the CPUs, so rates and latencies are noisy; CPU-seconds, counted per process, less so",
			rep.Env.LoadBefore, rep.Env.LoadAfter, rep.Env.Cores))
	}
	rep.CheckGoals()
	fmt.Fprintf(os.Stderr, "done in %v\n", time.Since(start).Round(time.Second))
	if o.jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		return err
	}
	if o.out != "" {
		return os.WriteFile(o.out, md.Bytes(), 0o644)
	}
	_, err = os.Stdout.Write(md.Bytes())
	return err
}

// child runs the bench binary with args and GOMAXPROCS=2 and decodes its
// result.
func child(self string, args []string, limit time.Duration) (work.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	var res work.Result
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("%v: %s", err, strings.TrimSpace(lastLines(errb.String(), 5)))
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return res, fmt.Errorf("child output: %w", err)
	}
	return res, nil
}

// parseFamilies parses a comma-separated list of address families.
func parseFamilies(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range split(s) {
		v, err := strconv.Atoi(f)
		if err != nil || (v != 4 && v != 6) {
			return nil, fmt.Errorf("%s: %q is not an address family (want 4 or 6)", flagName, f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no address family given", flagName)
	}
	return out, nil
}

// intersect keeps the families of a that b lists too, in a's order.
func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		for _, y := range b {
			if x == y {
				out = append(out, x)
				break
			}
		}
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// busy reports whether a one-minute load average (the first field of
// load) exceeds limit.
func busy(load string, limit float64) bool {
	f := strings.Fields(load)
	if len(f) == 0 {
		return false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return err == nil && v > limit
}

// environment describes the machine and the builds.
func environment(o options) report.Env {
	e := report.Env{Date: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(),
		Modules: map[string]string{}, Cores: runtime.NumCPU(), GOMAXPROCS: 2,
		LoadBefore: loadavg(), Quick: o.quick, Reps: o.reps, Params: params(o.quick), Families: o.families, ManyFamilies: o.manyFamilies}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "gvisor.dev/gvisor":
				e.Modules[d.Path] = d.Version
			case "github.com/savanna-sim/savanna":
				v := d.Version
				if d.Replace != nil {
					v = "working tree (replace => " + d.Replace.Path + ")"
				}
				if c := gitHead(); c != "" {
					v += ", HEAD " + c
				}
				e.Modules[d.Path] = v
			}
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	return e
}

// gitHead reads the commit the working tree is on (read-only).
func gitHead() string {
	out, err := exec.Command("git", "-C", "..", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
