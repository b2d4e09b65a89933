package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/metrics"
	"github.com/savanna-sim/savanna/internal/qatdev"
	"github.com/savanna-sim/savanna/sim/qat"
)

const qatUsage = `Usage:
  simrun qat serve --socket PATH [--model c62x|dh895xcc|4xxx] [--instances N] [--vfs N]
                   [--driver qat1.6-legacy|oot31092|oot40052] [--completion polling|thread]
                   [--usdm-limit BYTES] [--metrics ADDR] [--json]
  simrun qat stats --socket PATH [--json]
  simrun qat fault --socket PATH KIND [--device NAME] [--rate R] [--instances N] [--delay D]
  simrun qat clear --socket PATH [KIND] [--device NAME]

serve runs the QAT device process (the model in real time) until SIGINT or
SIGTERM and prints its statistics at exit; with --metrics (host:port) it
serves them as Prometheus text at http://ADDR/metrics. KIND is one of
instance_exhaustion, usdm_exhaustion, engine_error, hang, reset, heartbeat.
`

// cmdQAT runs the QAT device process and talks to it (docs/qat.md, "The
// device process").
func cmdQAT(args []string, stdout, stderr io.Writer) int {
	return cmdQATWith(args, stdout, stderr, notifyStop)
}

// cmdQATWith is cmdQAT with the source of stop signals given (specs send
// their own).
func cmdQATWith(args []string, stdout, stderr io.Writer, notify func() (<-chan os.Signal, func())) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, qatUsage)
		return 2
	}
	switch args[0] {
	case "serve":
		return qatServe(args[1:], stdout, stderr, notify)
	case "stats":
		return qatStats(args[1:], stdout, stderr)
	case "fault", "clear":
		return qatFault(args[0], args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, qatUsage)
		return 0
	}
	fmt.Fprintf(stderr, "simrun qat: unknown command %q\n%s", args[0], qatUsage)
	return 2
}

// qatServeFlags are serve's options.
type qatServeFlags struct {
	socket, model, driver, completion string
	instances, vfs                    int
	usdmLimit                         int64
	json                              bool
	// metrics is the address of the Prometheus endpoint (issue 24:
	// every long-running process serves one); empty: none.
	metrics string
}

// config turns the flags into the model's configuration, naming the
// flag of any bad value.
func (f qatServeFlags) config() (qatdev.Config, error) {
	if f.socket == "" {
		return qatdev.Config{}, errors.New("--socket: a path is required")
	}
	if _, err := qat.ModelByName(f.model); err != nil {
		return qatdev.Config{}, fmt.Errorf("--model: %w", err)
	}
	dc := qat.DeviceConfig{Model: f.model, Instances: f.instances, VFs: f.vfs,
		Driver: qat.Driver(f.driver), Completion: qat.CompletionMode(f.completion)}
	if f.usdmLimit < 0 {
		return qatdev.Config{}, fmt.Errorf("--usdm-limit: %d is negative", f.usdmLimit)
	}
	if f.usdmLimit > 0 {
		// usdm_drv counts 2 MiB hugepages: the limit is rounded up to
		// whole pages, and one process may hold them all unless its own
		// limit (48 pages) is lower.
		pages := int((f.usdmLimit + int64(hw.Hugepage2M) - 1) / int64(hw.Hugepage2M))
		dc.USDM = qat.USDMConfig{MaxHugePages: pages, MaxHugePagesPerProcess: min(pages, 48)}
	}
	if err := dc.Validate(); err != nil {
		return qatdev.Config{}, fmt.Errorf("device: %w", err)
	}
	return qatdev.Config{QAT: qat.Config{Devices: []qat.DeviceConfig{dc}}}, nil
}

func qatServe(args []string, stdout, stderr io.Writer, notify func() (<-chan os.Signal, func())) int {
	fs := flag.NewFlagSet("qat serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f qatServeFlags
	fs.StringVar(&f.socket, "socket", "", "Unix socket to serve on")
	fs.StringVar(&f.model, "model", "c62x", "device model: c62x, dh895xcc or 4xxx")
	fs.IntVar(&f.instances, "instances", 0, "instances of the device section (0: the driver's default, 64 or 256)")
	fs.IntVar(&f.vfs, "vfs", 0, "SR-IOV virtual functions the instances are spread across")
	fs.StringVar(&f.driver, "driver", "", "driver: qat1.6-legacy, oot31092 or oot40052 (default oot40052)")
	fs.StringVar(&f.completion, "completion", "", "completion mode: polling (default) or thread")
	fs.Int64Var(&f.usdmLimit, "usdm-limit", 0, "USDM pinned memory of the device's node, in bytes (0: 1024 hugepages)")
	fs.BoolVar(&f.json, "json", false, "print the statistics at exit as JSON")
	fs.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics (host:port)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simrun qat serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	sig, release := notify()
	defer release()
	d, code := startQATDevice(f, "simrun qat serve", stderr)
	if d == nil {
		return code
	}
	defer d.close()
	srv, served := d.srv, d.served
	code = 0
	select {
	case <-sig:
	case err := <-served:
		if err != nil {
			fmt.Fprintf(stderr, "simrun qat serve: %v\n", err)
			code = 1
		}
	}
	t := srv.Telemetry()
	d.close()
	if err := printTelemetry(stdout, t, f.json); err != nil {
		fmt.Fprintf(stderr, "simrun qat serve: %v\n", err)
		return 1
	}
	return code
}

// qatDevice is a running device process: its server, the result of its
// Serve, and its metrics endpoint if any.
type qatDevice struct {
	srv     *qatdev.Server
	served  chan error
	metrics *metrics.Server
}

// startQATDevice makes the device f describes, listens on f.socket and
// serves it (and its metrics, when f.metrics is set). On failure it
// prints why, prefixed with who, and returns nil and the exit code.
// Both simrun qat serve and simrun serve --qat start the device here.
func startQATDevice(f qatServeFlags, who string, stderr io.Writer) (*qatDevice, int) {
	cfg, err := f.config()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", who, err)
		return nil, 2
	}
	srv, err := qatdev.NewServer(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", who, err)
		return nil, 2
	}
	if err := srv.Listen(f.socket); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", who, err)
		return nil, 1
	}
	d := &qatDevice{srv: srv, served: make(chan error, 1)}
	go func() { d.served <- srv.Serve() }()
	if f.metrics != "" {
		ms, err := serveQATMetrics(f.metrics, srv, stderr)
		if err != nil {
			_ = srv.Close()
			fmt.Fprintf(stderr, "%s: --metrics %s: %v\n", who, f.metrics, err)
			return nil, 1
		}
		d.metrics = ms
		fmt.Fprintf(stderr, "simrun qat: metrics at http://%s/metrics\n", ms.Addr())
	}
	dev := srv.Service().Devices()[0]
	fmt.Fprintf(stderr, "simrun qat: %s (%s, %s, %d instances) serving on %s\n",
		dev.Name(), dev.Model().Name, dev.Driver(), dev.Instances(), f.socket)
	return d, 0
}

// close stops the metrics endpoint and the server; later calls do
// nothing.
func (d *qatDevice) close() {
	if d.metrics != nil {
		_ = d.metrics.Close()
		d.metrics = nil
	}
	_ = d.srv.Close()
}

func qatStats(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("qat stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "the device process's socket")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *socket == "" || fs.NArg() > 0 {
		fmt.Fprint(stderr, "simrun qat stats: --socket PATH is required, and nothing else\n")
		return 2
	}
	t, err := qatdev.QueryStats(*socket)
	if err != nil {
		fmt.Fprintf(stderr, "simrun qat stats: %v\n", err)
		return 1
	}
	if err := printTelemetry(stdout, t, *asJSON); err != nil {
		fmt.Fprintf(stderr, "simrun qat stats: %v\n", err)
		return 1
	}
	return 0
}

// qatFault is fault and clear: flags may come before or after KIND.
func qatFault(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("qat "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "the device process's socket")
	device := fs.String("device", "", "device name (default: every device)")
	rate := fs.Float64("rate", 0, "engine_error: share of failing requests, 0..1")
	instances := fs.Int("instances", 0, "instance_exhaustion: instances to hold (0: all)")
	delay := fs.Duration("delay", 0, "reset: how long the device stays down")
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case *socket == "":
		fmt.Fprintf(stderr, "simrun qat %s: --socket PATH is required\n", cmd)
		return 2
	case len(pos) > 1:
		fmt.Fprintf(stderr, "simrun qat %s: one KIND, not %q\n", cmd, strings.Join(pos, " "))
		return 2
	case cmd == "fault" && len(pos) == 0:
		fmt.Fprintf(stderr, "simrun qat fault: KIND is required (one of %v)\n", qat.FaultKinds())
		return 2
	}
	kind := ""
	if len(pos) == 1 {
		kind = pos[0]
		if err := qat.FaultKind(kind).Validate(); err != nil {
			fmt.Fprintf(stderr, "simrun qat %s: %v\n", cmd, err)
			return 2
		}
	}
	var err error
	if cmd == "fault" {
		err = qatdev.InjectFault(*socket, qatdev.Fault{Device: *device, Kind: kind, Rate: *rate, Instances: *instances, Delay: *delay})
	} else {
		err = qatdev.ClearFault(*socket, *device, kind)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun qat %s: %v\n", cmd, err)
		return 1
	}
	what := kind
	if what == "" {
		what = "every fault"
	}
	fmt.Fprintf(stdout, "%s: %s\n", cmd, what)
	return 0
}

// serveQATMetrics serves the device process's telemetry as Prometheus
// metrics (internal/metrics' QAT collector, the process and Go
// collectors).
func serveQATMetrics(addr string, srv *qatdev.Server, stderr io.Writer) (*metrics.Server, error) {
	reg, err := metrics.NewQATRegistry(metrics.NewQATCollector(srv.Telemetry))
	if err != nil {
		return nil, err
	}
	return metrics.Listen(addr, reg, slog.New(slog.NewTextHandler(stderr, nil)))
}

// printTelemetry writes the statistics as JSON or as tables.
func printTelemetry(w io.Writer, t qatdev.Telemetry, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	}
	s := t.Server
	fmt.Fprintf(w, "uptime %v: %d connections, %d processes (%d connected, %d disconnected, %d unclean), %d requests, %d bad\n",
		t.Uptime.Round(time.Millisecond), s.Connections, s.Processes, s.Active, s.Disconnects, s.Unclean, s.Requests, s.BadRequests)
	if s.LastBadRequest != "" {
		fmt.Fprintf(w, "last bad request: %s\n", s.LastBadRequest)
	}
	m := t.Model
	fmt.Fprintf(w, "instances: %d in use, %d free; attach failures: %d no instance, %d device down\n",
		m.InstancesInUse, m.InstancesFree, m.AttachFailures.NoInstance, m.AttachFailures.DeviceDown)
	fmt.Fprintf(w, "pinned: %d allocs, %d frees, %d failures (%d memfd full); leaked %d buffers, %d bytes, %d pages in %d exits\n",
		m.PinnedAllocs, m.PinnedFrees, m.PinnedAllocFailures, s.MemfdFull, m.Leaked.Buffers, m.Leaked.Bytes, m.Leaked.Pages, s.ExitsWithLeaks)
	fmt.Fprintf(w, "faults: %d injected, %d cleared\n", s.FaultsInjected, s.FaultsCleared)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pid\tconnected\tinstances\trequests\tbytes in\tbytes out\terrors\tpinned bytes\tleaked bytes\t")
	for _, p := range t.Processes {
		fmt.Fprintf(tw, "%d\t%v\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.PID, p.Connected, p.Instances, p.Requests,
			p.BytesIn, p.BytesOut, p.Errors, p.PinnedBytes, p.Leaked.Bytes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "instance\tpid\trequests\tbytes in\tbytes out\tbusy\terrors\t")
	for _, i := range t.Instances {
		if i.PID == 0 && i.Requests == 0 {
			continue // never used: the table would list all 256
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%v\t%d\t\n", i.Name, i.PID, i.Requests, i.BytesIn, i.BytesOut, i.Busy, i.Errors)
	}
	return tw.Flush()
}
