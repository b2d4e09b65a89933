// Command simrun runs Savanna scenarios: hardware-emulating simulations
// of kernel-bypass networking and accelerator offload, in virtual time.
//
//	simrun run scenarios/quickstart.yaml     run a scenario, print its report
//	simrun validate FILE                     check a scenario without running it
//	simrun run FILE --shard I/N --out DIR    a share of a sweep's points
//	simrun merge DIR...                      join a sweep's shards into its report
//	simrun list                              bundled scenarios and app kinds
//	simrun topo [PRESET|host] [--json]       a machine's NUMA layout
//	simrun serve ... / simrun ctl show       the stack live, and a look inside
//	simrun qat serve --socket PATH           a simulated QAT device for processes
//	simrun exec -- PROGRAM ARGS...           a zlib program on Savanna's shim
//	simrun version                           Savanna's version
//
// Exit codes of run: 0 every expectation held, 1 an expectation failed
// or the run was stopped (--max-wall, SIGINT, SIGTERM) with a partial
// report marked incomplete, 2 the scenario is invalid or cannot run (an
// expectation that cannot be evaluated included; the report is still
// printed).
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `simrun runs Savanna scenarios in virtual time.

Usage:
  simrun run FILE|NAME [--seed N] [--format table|json|md] [--out DIR] [--timing]
             [--progress] [--max-wall D] [-j K] [--shard I/N|auto] [--shard-count N]
  simrun merge DIR... [--format table|json|md] [--out DIR]
  simrun validate FILE|NAME
  simrun list
  simrun topo [PRESET|host] [--json]
  simrun reproduce [--out FILE] [--sensitivity] [-j K] [FILE|NAME...]
  simrun serve --tap NAME --ip CIDR --app kv|echo --port N [--cores K] [--mac M]
  simrun serve --backend dpdk --eal "ARGS" --ip CIDR --app kv|echo --port N [--cores K]
               [--metrics ADDR] [--qat SOCKET] [--ctl PATH|none] [--log-level LEVEL]
  simrun ctl [--socket PATH] [--json] show [--rate [--count N] | --conn | --latency | --xstats]
  simrun ctl [--socket PATH] set loglevel debug|info|warn|error
  simrun qat serve --socket PATH [--model M] [--instances N] [--completion polling|thread] [--json]
  simrun qat stats|clear --socket PATH [--json];  simrun qat fault --socket PATH KIND
  simrun exec [--qat SOCKET] [--sw] [--stats] -- PROGRAM ARGS...
  simrun calibrate [--out FILE] [--runs N] [--quick] [--force]
  simrun calibrate compare [--limit F] [--all] A.yaml B.yaml
  simrun check-model [--cost FILE] [--clients 1,10,50,200,1000] [--workloads redis,savanna,nginx] [--requests N] [--duration D] [--quick] [--savanna] [--out FILE]
  simrun version

FILE is a scenario file; NAME is a bundled scenario (simrun list shows them).

Exit codes of run: 0 every expectation held; 1 an expectation failed, or
the run was stopped (--max-wall, Ctrl-C, SIGTERM) and its partial report is
marked incomplete; 2 the file is invalid or cannot run, or an expectation
cannot be evaluated (the report is still printed). validate: 0 or 2; it
checks expectations against the figures the built variants have. A file
with a sweep: section runs its points (-j K at once; --shard I/N a share,
joined by simrun merge: docs/scale-out.md) and exits 0 when every point
ran, whatever the expectations' outcomes, which its report tabulates.

Start with:  simrun run quickstart
Scenario format: docs/scenarios.md
`

// run dispatches a subcommand and returns the process's exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "merge":
		return cmdMerge(args[1:], stdout, stderr)
	case "list":
		return cmdList(args[1:], stdout, stderr)
	case "topo":
		return cmdTopo(args[1:], stdout, stderr)
	case "reproduce":
		return cmdReproduce(args[1:], stdout, stderr)
	case "serve":
		return cmdServe(args[1:], stdout, stderr)
	case "ctl":
		return cmdCtl(args[1:], stdout, stderr)
	case "qat":
		return cmdQAT(args[1:], stdout, stderr)
	case "exec":
		return cmdExec(args[1:], stdout, stderr)
	case "calibrate":
		return cmdCalibrate(args[1:], stdout, stderr)
	case "check-model":
		return cmdCheckModel(args[1:], stdout, stderr)
	case "version", "--version":
		return cmdVersion(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "simrun: unknown command %q\n\n%s", args[0], usage)
	return 2
}
