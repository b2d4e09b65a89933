package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

const execUsage = `Usage: simrun exec [--stack SOCKET [--preload-lib DIR] [--zlib]] [--dropin DIR] [--qat SOCKET | --sw] [--stats] [--stats-file FILE] -- PROGRAM [ARGS...]
       simrun exec --stack SOCKET --stack-stats [--json]

Runs PROGRAM on Savanna's libz.so.1 drop-in (docs/zlib-dropin.md): its
deflate streams go to Savanna's zlib shim, on a simulated QAT device in
each process (default), on the QAT device process at SOCKET (--qat), or in
the shim's software path (--sw); what the shim cannot serve goes to the
system zlib, counted by reason.

With --stack, PROGRAM runs on Savanna's TCP/IP stack instead
(docs/preload.md): libsavanna_preload.so on LD_PRELOAD, attached to the
stack process at SOCKET (simrun serve --preload SOCKET), so its IPv4 TCP
sockets are the stack process's. The zlib drop-in then joins only when a
drop-in flag is given (--zlib, --dropin, --qat, --sw, --stats,
--stats-file): both at once is Tengine on Gazelle with QAT.

  --stack SOCKET     run PROGRAM on the stack process at SOCKET
  --stack-stats      with --stack and no PROGRAM, print the stack
                     process's statistics now (per process and per
                     socket, open ones too; --json: as JSON) and exit
  --preload-lib DIR  use the preload library built in DIR
                     (libsavanna_preload.so) instead of building
                     preload/out from this checkout when it is stale
  --zlib             with --stack, also the zlib drop-in, defaults
  --dropin DIR       use the drop-in built in DIR (libz.so.1 and
                     libsavanna_zlibgo.so) instead of building
                     dropin/out from this checkout when it is stale
  --stats            at exit, print the drop-in's counters summed over
                     every process that opened a deflate stream
  --stats-file FILE  keep the per-process counters (one JSON line each)

The exit code is PROGRAM's (128+N when killed by signal N); 2 for a usage
error, 127 when the drop-in, the preload library or PROGRAM cannot be
started (a stack process that is not there is an error of PROGRAM's
first socket, not of exec).
`

// cmdExec runs a program with the zlib drop-in on its library path.
// LD_LIBRARY_PATH rather than LD_PRELOAD: it changes where libz.so.1 is
// found, so only programs that link zlib load the drop-in (a shell in the
// middle of a pipeline, or a helper nginx starts, is left alone), and
// the system zlib is never loaded beside it under the same soname.
func cmdExec(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("exec", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() { fmt.Fprint(stderr, execUsage) }
	dropin := fset.String("dropin", "", "folder of a built drop-in")
	qat := fset.String("qat", "", "QAT device process socket (SAVANNA_QAT)")
	sw := fset.Bool("sw", false, "the shim's software path only (SAVANNA_ZLIB_SW=1)")
	stats := fset.Bool("stats", false, "print the drop-in's counters at exit")
	statsFile := fset.String("stats-file", "", "keep the per-process counters in FILE")
	stack := fset.String("stack", "", "stack process socket (simrun serve --preload SOCKET)")
	preloadLib := fset.String("preload-lib", "", "folder of a built preload library")
	zlib := fset.Bool("zlib", false, "with --stack, also the zlib drop-in")
	stackStats := fset.Bool("stack-stats", false, "with --stack: print the stack process's statistics now")
	asJSON := fset.Bool("json", false, "with --stack-stats: as JSON")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *stackStats || *asJSON {
		return printStackStats(*stack, *stackStats, *asJSON, len(fset.Args()) > 0, stdout, stderr)
	}
	useZlib := *stack == ""
	fset.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "zlib", "dropin", "qat", "sw", "stats", "stats-file":
			useZlib = true
		}
	})
	if *stack == "" && (*preloadLib != "" || *zlib) {
		fmt.Fprintln(stderr, "simrun exec: --preload-lib and --zlib go with --stack")
		return 2
	}
	prog := fset.Args()
	if len(prog) == 0 {
		fmt.Fprint(stderr, "simrun exec: no program given\n"+execUsage)
		return 2
	}
	if *qat != "" && *sw {
		fmt.Fprintln(stderr, "simrun exec: --qat and --sw exclude each other")
		return 2
	}
	env := os.Environ()
	if *stack != "" {
		lib, err := preloadLibrary(*preloadLib, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "simrun exec: %v\n", err)
			return 127
		}
		sock, err := filepath.Abs(*stack)
		if err != nil {
			fmt.Fprintf(stderr, "simrun exec: --stack %s: %v\n", *stack, err)
			return 2
		}
		env = preloadEnv(env, lib, sock)
	}
	if !useZlib {
		return runProgram(prog, env, stdout, stderr)
	}
	dir := *dropin
	if dir == "" {
		var err error
		if dir, err = ensureDropin(stderr); err != nil {
			fmt.Fprintf(stderr, "simrun exec: %v\n", err)
			return 127
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		fmt.Fprintf(stderr, "simrun exec: --dropin %s: %v\n", *dropin, err)
		return 127
	}
	for _, f := range []string{"libz.so.1", "libsavanna_zlibgo.so"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			fmt.Fprintf(stderr, "simrun exec: drop-in folder %s: %v (build it with dropin/build)\n", dir, err)
			return 127
		}
	}

	sf := *statsFile
	if *stats && sf == "" {
		tmp, err := os.CreateTemp("", "simrun-zlib-stats-*.jsonl")
		if err != nil {
			fmt.Fprintf(stderr, "simrun exec: stats file: %v\n", err)
			return 127
		}
		tmp.Close()
		sf = tmp.Name()
		defer os.Remove(sf)
	}
	if sf != "" {
		if sf, err = shareStatsFile(sf); err != nil {
			fmt.Fprintf(stderr, "simrun exec: stats file: %v\n", err)
			return 2
		}
	}

	code := runProgram(prog, execEnv(env, dir, *qat, *sw, sf), stdout, stderr)
	if *stats {
		if err := printDropinStats(stderr, sf); err != nil {
			fmt.Fprintf(stderr, "simrun exec: stats: %v\n", err)
		}
	}
	return code
}

// runProgram runs prog with env, passing the terminal's signals on, and
// returns its exit code (127 when it cannot start).
func runProgram(prog, env []string, stdout, stderr io.Writer) int {
	cmd := exec.Command(prog[0], prog[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "simrun exec: %v\n", err)
		return 127
	}
	// Ctrl-C and SIGTERM go to the program, which decides how to stop.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	signal.Stop(sigs)
	close(done)
	return exitCode(cmd, werr)
}

// execEnv is the program's environment: the caller's, with the drop-in
// first on the library path and the shim's variables set.
func execEnv(base []string, dir, qat string, sw bool, statsFile string) []string {
	set := map[string]string{}
	ld := dir
	for _, kv := range base {
		if v, ok := strings.CutPrefix(kv, "LD_LIBRARY_PATH="); ok && v != "" {
			ld = dir + ":" + v
		}
	}
	set["LD_LIBRARY_PATH"] = ld
	set["SAVANNA_ZLIBGO"] = filepath.Join(dir, "libsavanna_zlibgo.so")
	if qat != "" {
		set["SAVANNA_QAT"] = qat
	}
	if sw {
		set["SAVANNA_ZLIB_SW"] = "1"
	}
	if statsFile != "" {
		set["SAVANNA_ZLIB_STATS"] = statsFile
	}
	var env []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+set[k])
	}
	return env
}

// shareStatsFile makes the stats file exist and writable by every user:
// servers started as root (nginx) write it from workers that dropped to
// another user. Each process appends one line.
func shareStatsFile(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err != nil {
		return "", err
	}
	f.Close()
	return abs, os.Chmod(abs, 0o666)
}

func exitCode(cmd *exec.Cmd, err error) int {
	if err == nil {
		return 0
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if cmd.ProcessState != nil {
		return cmd.ProcessState.ExitCode()
	}
	return 1
}

// ensureDropin finds dropin/ in the checkout around the working directory
// and runs dropin/build when dropin/out is missing or older than a source
// of the drop-in (dropin/zlib, dropin/zlibgo, zlibshim).
func ensureDropin(stderr io.Writer) (string, error) {
	root, err := checkoutRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(root, "dropin", "out")
	built := oldestMod([]string{filepath.Join(out, "libz.so.1"), filepath.Join(out, "libsavanna_zlibgo.so")})
	src := newestMod(filepath.Join(root, "dropin", "zlib"), filepath.Join(root, "dropin", "zlibgo"), filepath.Join(root, "zlibshim"))
	if !built.IsZero() && !src.After(built) {
		return out, nil
	}
	fmt.Fprintf(stderr, "simrun exec: building the drop-in (dropin/build %s)\n", out)
	b := exec.Command(filepath.Join(root, "dropin", "build"), out)
	b.Dir, b.Stdout, b.Stderr = root, stderr, stderr
	if err := b.Run(); err != nil {
		return "", fmt.Errorf("dropin/build: %w (or give --dropin DIR)", err)
	}
	return out, nil
}

// checkoutRoot is the nearest folder at or above the working directory
// that holds dropin/build.
func checkoutRoot() (string, error) { return findUp("dropin", "--dropin") }

// findUp is the nearest folder at or above the working directory that
// holds sub/build (flag names the way around it in the error).
func findUp(sub, flag string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, sub, "build")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s/build in or above the working directory: give %s DIR", sub, flag)
		}
		dir = parent
	}
}

// oldestMod is the oldest modification time of files, zero if one is
// missing.
func oldestMod(files []string) time.Time {
	var t time.Time
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return time.Time{}
		}
		if t.IsZero() || st.ModTime().Before(t) {
			t = st.ModTime()
		}
	}
	return t
}

// newestMod is the newest modification time of the files under dirs.
func newestMod(dirs ...string) time.Time {
	var t time.Time
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(_ string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			if info, err := e.Info(); err == nil && info.ModTime().After(t) {
				t = info.ModTime()
			}
			return nil
		})
	}
	return t
}

// dropinStats is one process's line of the drop-in's counters
// (dropin/zlib/dropin.c, savanna_zlib_stats); the shim's part keeps only
// what the summary prints.
type dropinStats struct {
	PID           int               `json:"pid"`
	StreamsShim   uint64            `json:"streams_shim"`
	StreamsSystem map[string]uint64 `json:"streams_system"`
	Refused       map[string]uint64 `json:"refused"`
	InitErrors    uint64            `json:"init_errors"`
	ShimBytesIn   uint64            `json:"shim_bytes_in"`
	ShimBytesOut  uint64            `json:"shim_bytes_out"`
	FlushesMapped uint64            `json:"flushes_mapped"`
	ParamsKept    uint64            `json:"params_kept"`
	GoUnusable    bool              `json:"go_unusable"`
	Shim          *struct {
		Service      string `json:"service"`
		ServiceError string `json:"service_error"`
		Stats        struct {
			HWRequests uint64            `json:"hw_requests"`
			HWBytesIn  uint64            `json:"hw_bytes_in"`
			SWRequests uint64            `json:"sw_requests"`
			SWBytesIn  uint64            `json:"sw_bytes_in"`
			Small      uint64            `json:"small_requests"`
			Fallbacks  map[string]uint64 `json:"fallbacks"`
		} `json:"stats"`
	} `json:"shim"`
}

// readDropinStats reads the per-process lines; a line that does not
// parse is an error naming its line number.
func readDropinStats(path string) ([]dropinStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var all []dropinStats
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var s dropinStats
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		all = append(all, s)
	}
	return all, sc.Err()
}

// printDropinStats sums the processes' counters and prints them, naming
// every nonzero reason a stream went to the system zlib or a call was
// refused.
func printDropinStats(w io.Writer, path string) error {
	all, err := readDropinStats(path)
	if err != nil {
		return err
	}
	var t dropinStats
	t.StreamsSystem, t.Refused = map[string]uint64{}, map[string]uint64{}
	fallbacks := map[string]uint64{}
	var hwReq, hwIn, swReq, swIn, small uint64
	services := map[string]int{}
	for _, s := range all {
		t.StreamsShim += s.StreamsShim
		t.InitErrors += s.InitErrors
		t.ShimBytesIn += s.ShimBytesIn
		t.ShimBytesOut += s.ShimBytesOut
		t.FlushesMapped += s.FlushesMapped
		t.ParamsKept += s.ParamsKept
		for k, v := range s.StreamsSystem {
			t.StreamsSystem[k] += v
		}
		for k, v := range s.Refused {
			t.Refused[k] += v
		}
		if s.Shim != nil {
			services[s.Shim.Service]++
			hwReq += s.Shim.Stats.HWRequests
			hwIn += s.Shim.Stats.HWBytesIn
			swReq += s.Shim.Stats.SWRequests
			swIn += s.Shim.Stats.SWBytesIn
			small += s.Shim.Stats.Small
			for k, v := range s.Shim.Stats.Fallbacks {
				fallbacks[k] += v
			}
		}
	}
	var system uint64
	for _, v := range t.StreamsSystem {
		system += v
	}
	fmt.Fprintf(w, "simrun exec: zlib drop-in, %d processes with deflate streams (shim on %s)\n", len(all), joinCounts(services))
	fmt.Fprintf(w, "  streams: shim %d, system %d%s; init errors %d\n", t.StreamsShim, system, nonzero(t.StreamsSystem), t.InitErrors)
	fmt.Fprintf(w, "  shim bytes: in %d, out %d; Z_PARTIAL_FLUSH/Z_BLOCK as sync %d; deflateParams kept %d\n",
		t.ShimBytesIn, t.ShimBytesOut, t.FlushesMapped, t.ParamsKept)
	fmt.Fprintf(w, "  shim requests: device %d (%d bytes), software %d (%d bytes, %d small)\n", hwReq, hwIn, swReq, swIn, small)
	var fb, ref uint64
	for _, v := range fallbacks {
		fb += v
	}
	for _, v := range t.Refused {
		ref += v
	}
	fmt.Fprintf(w, "  fallbacks %d%s; refused calls %d%s\n", fb, nonzero(fallbacks), ref, nonzero(t.Refused))
	return nil
}

// nonzero lists a map's nonzero entries, sorted: " (a 1, b 2)".
func nonzero(m map[string]uint64) string {
	var parts []string
	for k, v := range m {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	sort.Strings(parts)
	return " (" + strings.Join(parts, ", ") + ")"
}

func joinCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s x%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
