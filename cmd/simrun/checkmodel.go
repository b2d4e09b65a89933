package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/savanna-sim/savanna/internal/checkmodel"
)

// checkModelUsage is check-model's usage line.
const checkModelUsage = "usage: simrun check-model [--cost FILE] [--clients 1,10,50,200,1000] [--workloads redis,savanna,nginx] [--requests N] [--duration D] [--quick] [--savanna [--simrun PATH]] [--timeout D] [--out FILE] [--quiet]"

// cmdCheckModel runs real redis-server and redis-benchmark (and, by
// --workloads, simrun serve --app kv, and nginx against wrk) in network
// namespaces and the same shape simulated, and prints the two side by
// side (docs/validation.md). Exit codes: 0 every banded figure within its
// band, 1 a figure missed (the table is still written), 2 it could not
// run (not root, no ip netns, a bad flag, a program missing).
func cmdCheckModel(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check-model", flag.ContinueOnError)
	fs.SetOutput(stderr)
	costFile := fs.String("cost", "", "cost-model file for the simulated hosts (simrun calibrate writes one); default the default prices")
	clients := fs.String("clients", "1,10,50,200,1000", "numbers of clients, comma-separated: one point each for SET and GET (redis), one point each of wrk connections (nginx)")
	workloads := fs.String("workloads", checkmodel.WorkloadRedis, "what runs live, comma-separated, in this order: "+strings.Join(checkmodel.Workloads(), ", ")+
		" (nginx: Debian's nginx serving a static file to wrk, the held-out workload no price was fitted to)")
	requests := fs.Int("requests", 100000, "requests per redis point (redis-benchmark -n)")
	duration := fs.Duration("duration", 5*time.Second, "each nginx point's wrk run (wrk -d), whole seconds")
	quick := fs.Bool("quick", false, "1 and 10 clients, 20000 requests, 2s per nginx point: a quick look (the server's CPU figures are coarse)")
	savanna := fs.Bool("savanna", false, "also run simrun serve --app kv live in the server namespace, and its simulated twin (the same as adding savanna to --workloads)")
	simrun := fs.String("simrun", "", "the simrun binary that --savanna runs serve with (default this one)")
	timeout := fs.Duration("timeout", 2*time.Minute, "kill a live redis-benchmark or wrk run after this long")
	out := fs.String("out", "", "also write the report as Markdown to this file (docs/validation.md is one)")
	quiet := fs.Bool("quiet", false, "print no line per step on stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, checkModelUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 0 {
		fs.Usage()
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg := checkmodel.Config{Commands: []string{"SET", "GET"}, Requests: *requests, DataSize: 3,
		CostFile: *costFile, Simrun: *simrun, Duration: *duration, Timeout: *timeout}
	if *quick {
		if !set["clients"] {
			*clients = "1,10"
		}
		if !set["requests"] {
			cfg.Requests = 20000
		}
		if !set["duration"] {
			cfg.Duration = 2 * time.Second
		}
	}
	cfg.Workloads = parseWorkloads(*workloads, *savanna)
	if cfg.Clients, err = parseClients(*clients); err != nil {
		fmt.Fprintf(stderr, "simrun check-model: --clients %q: %v\n", *clients, err)
		return 2
	}
	if cfg.Has(checkmodel.WorkloadSavanna) && cfg.Simrun == "" {
		if cfg.Simrun, err = os.Executable(); err != nil {
			fmt.Fprintf(stderr, "simrun check-model: --savanna: %v; give --simrun PATH\n", err)
			return 2
		}
	}
	if cfg.CostFile != "" {
		if _, err := os.Stat(cfg.CostFile); err != nil {
			fmt.Fprintf(stderr, "simrun check-model: --cost: %v\n", err)
			return 2
		}
	}
	if !*quiet {
		cfg.Log = stderr
	}
	// A signal cancels the run; Run then stops what it started and
	// removes its namespaces before it returns.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := checkmodel.Run(ctx, cfg)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "simrun check-model: stopped by a signal (%v); its processes and namespaces are gone\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun check-model: %v\n", err)
		return 2
	}
	if err := checkmodel.WriteText(stdout, res); err != nil {
		return 2
	}
	if *out != "" {
		var b bytes.Buffer
		if err := checkmodel.WriteMarkdown(&b, res); err != nil {
			fmt.Fprintf(stderr, "simrun check-model: %v\n", err)
			return 2
		}
		if err := writeFileAtomic(*out, b.Bytes()); err != nil {
			fmt.Fprintf(stderr, "simrun check-model: %v\n", err)
			return 2
		}
		fmt.Fprintf(stdout, "Wrote %s.\n", *out)
	}
	if checkmodel.Count(res.Rows).Miss > 0 {
		return 1
	}
	return 0
}

// parseWorkloads reads --workloads, with savanna added by --savanna,
// in run order and each once (an unknown name is kept for Run to refuse
// by name).
func parseWorkloads(s string, savanna bool) []string {
	seen := map[string]bool{}
	var given []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !seen[f] {
			seen[f] = true
			given = append(given, f)
		}
	}
	if savanna && !seen[checkmodel.WorkloadSavanna] {
		seen[checkmodel.WorkloadSavanna] = true
		given = append(given, checkmodel.WorkloadSavanna)
	}
	var out []string
	for _, w := range checkmodel.Workloads() {
		if seen[w] {
			out = append(out, w)
		}
	}
	for _, w := range given {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// parseClients reads a comma-separated list of client counts.
func parseClients(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 10000 {
			return nil, fmt.Errorf("%q is not a number of clients in 1..10000", f)
		}
		out = append(out, n)
	}
	return out, nil
}
