package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/savanna-sim/savanna/apps/echo"
	"github.com/savanna-sim/savanna/apps/kv"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/control"
	"github.com/savanna-sim/savanna/internal/metrics"
	"github.com/savanna-sim/savanna/internal/version"
	"github.com/savanna-sim/savanna/stack/gonet"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

const serveUsage = `Usage: simrun serve [--backend tap] --tap NAME --ip CIDR --app kv|echo --port N [--cores K] [--mac M]
       simrun serve --backend dpdk --eal "EAL ARGS" [--dpdk-port NAME] --ip CIDR --app kv|echo --port N [--cores K]
       [--metrics ADDR] [--ctl PATH|none] [--log-level debug|info|warn|error]

Runs Savanna's stack in real time with an app, until SIGINT or SIGTERM;
then prints statistics and exits 0.

The tap backend (the default) runs on a Linux TAP device whose kernel side
is brought up; give it an address on the same subnet to talk to the stack
(docs/live.md). The dpdk backend (a build with -tags dpdk) runs on a DPDK
port: the EAL arguments pass to rte_eal_init unchanged, split at spaces,
e.g. "--no-huge -m 256 --no-pci --no-shconf -l 0-1
--vdev=net_tap0,iface=svd0" for DPDK's TAP PMD, or "-l 0-3 -a 0000:3b:00.0"
for a NIC bound to vfio-pci. The lcores are registered with the EAL
(docs/real-hardware.md).

Watching it run (docs/live.md, "Watching a running stack"): --metrics
127.0.0.1:9464 serves Prometheus' text format at /metrics (savanna_*
metrics, process_* and go_*); a control socket, by default
$XDG_RUNTIME_DIR/savanna/serve-PID.sock or /run/savanna/serve-PID.sock,
answers "simrun ctl show" (totals, --rate, --conn, --latency, --xstats)
and "simrun ctl set loglevel LEVEL". Logs go to standard error.
`

// maxParkDPDK bounds one park of an idle lcore on a DPDK port: a poll-mode
// driver cannot wake a parked lcore when frames arrive, so the lcore must
// come back to poll soon (--busy never parks, as DPDK applications do).
const maxParkDPDK = 200 * time.Microsecond

// serveConfig is serve's flags once parsed and checked: the backend's
// (serveOpts), the stack's, the app's and the watching side's. A new
// flag adds a field here, a line in parseServeFlags and, when it can be
// refused, a check there.
type serveConfig struct {
	port    serveOpts
	cidr    string
	ip      net.IP
	gateway string
	app     string
	appPort int
	busy    bool
	spin    time.Duration
	maxPark time.Duration
	json    bool

	// metrics is the address of the Prometheus endpoint, "" for none.
	metrics string
	// ctl is the control socket's path, "" for none; ctlDefault is true
	// when it is the default path, which serve does without (with a
	// warning) when it cannot make it.
	ctl        string
	ctlDefault bool
	// logLevel is the level logs start at.
	logLevel slog.Level
	// latency records read latency (stack/gonet.ReadLatency).
	latency bool
}

// parseServeFlags parses and checks serve's flags. On a refusal it prints
// the reason and returns the exit code (2) with ok false.
func parseServeFlags(args []string, stderr io.Writer) (c serveConfig, code int, ok bool) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, serveUsage); fs.PrintDefaults() }
	o := &c.port
	fs.StringVar(&o.backend, "backend", "tap", "port backend: tap (a Linux TAP) or dpdk (a DPDK port; needs a build with -tags dpdk)")
	fs.StringVar(&o.tapName, "tap", "", "with --backend tap: TAP interface to create or attach to")
	fs.StringVar(&o.eal, "eal", "", "with --backend dpdk: EAL arguments, split at spaces (vdevs as --vdev=...)")
	fs.StringVar(&o.dpdkPort, "dpdk-port", "", "with --backend dpdk: the port's device name (default: the only port probed)")
	fs.StringVar(&c.cidr, "ip", "", "the stack's IPv4 address with prefix, e.g. 10.77.0.2/24")
	fs.StringVar(&c.app, "app", "", "application: kv or echo")
	fs.IntVar(&c.appPort, "port", 0, "TCP port the app listens on")
	fs.IntVar(&o.cores, "cores", 1, "stack lcores (port queues)")
	fs.StringVar(&o.mac, "mac", "", "with --backend tap: the stack's MAC (default 02:53:56:00:00:02)")
	fs.StringVar(&c.gateway, "gateway", "", "default router (optional)")
	fs.IntVar(&o.mtu, "mtu", 1500, "IP MTU")
	fs.BoolVar(&c.busy, "busy", false, "poll at 100% CPU instead of parking idle lcores")
	fs.DurationVar(&c.spin, "spin", rt.DefaultSpin, "how long an idle lcore polls before it parks")
	fs.DurationVar(&c.maxPark, "max-park", 0, "longest park of an idle lcore (default 100ms on a TAP, which wakes lcores; 200µs on DPDK, which cannot)")
	fs.BoolVar(&c.json, "json", false, "print the final statistics as one JSON object")
	fs.Float64Var(&o.rxLoss, "rx-loss", 0, "with --backend tap: drop this fraction of frames from the kernel (for kernels without netem)")
	fs.Float64Var(&o.rxReord, "rx-reorder", 0, "with --backend tap: deliver this fraction of frames from the kernel one frame late")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of TCP secrets and impairments")
	fs.StringVar(&c.metrics, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics, e.g. 127.0.0.1:9464 (default: off)")
	ctl := fs.String("ctl", "", "control socket for simrun ctl (default "+control.DefaultDir()+"/serve-PID.sock; none: no socket)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error (simrun ctl set loglevel changes it)")
	fs.BoolVar(&c.latency, "read-latency", true, "record read latency for simrun ctl show --latency and savanna_read_latency_seconds")
	if _, err := parseInterleaved(fs, args); err != nil {
		return c, 2, false
	}
	refuse := func(format string, a ...any) (serveConfig, int, bool) {
		fmt.Fprintf(stderr, "simrun serve: "+format, a...)
		return c, 2, false
	}
	switch {
	case o.backend == "tap" && o.tapName == "":
		return refuse("--tap is required with --backend tap\n\n" + serveUsage)
	case o.backend == "dpdk" && o.eal == "":
		return refuse("--eal is required with --backend dpdk\n\n" + serveUsage)
	case c.cidr == "" || c.appPort <= 0 || c.appPort > 65535:
		return refuse("--ip and --port are required\n\n" + serveUsage)
	case c.app != "kv" && c.app != "echo":
		return refuse("--app %q: want kv or echo\n", c.app)
	case c.maxPark < 0:
		return refuse("--max-park %v: must not be negative\n", c.maxPark)
	}
	ip, _, err := net.ParseCIDR(c.cidr)
	if err != nil || ip.To4() == nil {
		return refuse("--ip %q: want an IPv4 CIDR such as 10.77.0.2/24\n", c.cidr)
	}
	c.ip = ip.To4()
	if c.logLevel, err = parseLogLevel(*logLevel); err != nil {
		return refuse("--log-level: %v\n", err)
	}
	if c.metrics != "" {
		if _, _, err := net.SplitHostPort(c.metrics); err != nil {
			return refuse("--metrics %q: want HOST:PORT such as 127.0.0.1:9464 (%v)\n", c.metrics, err)
		}
	}
	switch *ctl {
	case "":
		c.ctl, c.ctlDefault = control.DefaultPath(os.Getpid()), true
	case "none":
	default:
		c.ctl = *ctl
	}
	return c, 0, true
}

// parseLogLevel reads a level by slog's names, case-insensitively.
func parseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	switch strings.ToLower(s) {
	case "debug", "info", "warn", "error":
		return l, l.UnmarshalText([]byte(s))
	}
	return l, fmt.Errorf("%q: want debug, info, warn or error", s)
}

// serveApp is the application serve runs, whichever it is.
type serveApp struct {
	serve func(net.Listener) error
	// stats returns the app's Stats value (kv.Stats, echo.Stats).
	stats func() any
}

// newServeApp makes the application named by c.app.
func newServeApp(c serveConfig) (serveApp, error) {
	switch c.app {
	case "kv":
		s, err := kv.New(kv.Limits{})
		if err != nil {
			return serveApp{}, err
		}
		return serveApp{serve: s.Serve, stats: func() any { return s.Stats() }}, nil
	case "echo":
		s := &echo.Server{}
		return serveApp{serve: s.Serve, stats: func() any { return s.Stats() }}, nil
	}
	return serveApp{}, fmt.Errorf("--app %q: want kv or echo", c.app)
}

// cmdServe implements "simrun serve" (live mode).
func cmdServe(args []string, stdout, stderr io.Writer) int {
	c, code, ok := parseServeFlags(args, stderr)
	if !ok {
		return code
	}
	level := new(slog.LevelVar)
	level.Set(c.logLevel)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	fail := func(err error) int {
		fmt.Fprintf(stderr, "simrun serve: %v\n", err)
		return 2
	}

	be, err := openServeBackend(c.port)
	if err != nil {
		return fail(err)
	}
	defer be.close()
	dev := be.dev
	rcfg := rt.Config{Lcores: c.port.cores, Busy: c.busy, Spin: c.spin, NoSpin: c.spin == 0, Seed: c.port.seed,
		MaxPark: c.maxPark, ThreadHook: be.hook}
	if rcfg.MaxPark == 0 && !be.notifies {
		rcfg.MaxPark = maxParkDPDK
	}
	tcfg := tcp.DefaultConfig()
	if c.port.mtu != 0 {
		tcfg.MTU = c.port.mtu // TCP's path MTU is the link's
	}
	scfg := lstack.Config{Iface: iface.Config{Address: c.cidr, Gateway: c.gateway, MTU: c.port.mtu}, TCP: tcfg}
	r, err := rt.New(rcfg, scfg, dev, be.pool)
	if err != nil {
		return fail(err)
	}
	if err := r.Start(); err != nil {
		return fail(err)
	}
	defer r.Stop()
	var lat *gonet.ReadLatency
	var ln *gonet.Listener
	if c.latency {
		lat = gonet.NewReadLatency(c.port.cores)
		ln, err = gonet.ListenOptions(r, uint16(c.appPort), gonet.DefaultBacklog, gonet.Options{Latency: lat})
	} else {
		ln, err = gonet.Listen(r, uint16(c.appPort))
	}
	if err != nil {
		return fail(err)
	}
	app, err := newServeApp(c)
	if err != nil {
		_ = ln.Close()
		return fail(err)
	}
	started := time.Now()
	w := &watched{r: r, dev: dev, app: c.app, appStats: app.stats, lat: lat, started: started, level: level, log: log}
	stopWatching, err := w.start(c)
	if err != nil {
		_ = ln.Close()
		return fail(err)
	}
	defer stopWatching()

	serveErr := make(chan error, 1)
	go func() { serveErr <- app.serve(ln) }()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	lc := "lcore"
	if c.port.cores != 1 {
		lc = "lcores"
	}
	log.Info("serving", "app", c.app, "addr", fmt.Sprintf("%s:%d", c.ip, c.appPort), "port", be.what,
		"lcores", c.port.cores, "metrics", c.metrics, "ctl", c.ctl, "pid", os.Getpid())
	fmt.Fprintf(stdout, "savanna: serving %s on %s:%d (%s, %d %s)\n", c.app, c.ip, c.appPort, be.what, c.port.cores, lc)

	code = 0
	select {
	case s := <-sig:
		up := time.Since(started).Round(time.Millisecond)
		log.Info("stopping", "signal", s.String(), "uptime", up)
		fmt.Fprintf(stdout, "savanna: %v after %v, stopping\n", s, up)
	case err := <-serveErr:
		log.Error("app stopped", "app", c.app, "err", err)
		fmt.Fprintf(stderr, "simrun serve: app stopped: %v\n", err)
		code = 1
	}
	stopWatching()
	_ = ln.Close()
	snap := r.Snapshot()
	r.Stop()
	printServeStats(stdout, snap, dev.XStats(), c.app, app.stats(), c.json)
	log.Info("stopped")
	return code
}

// printServeStats prints the non-zero counters, one line per layer, with
// keys sorted so that the output is stable. simrun ctl show prints the
// same lines while serve runs.
func printServeStats(w io.Writer, s rt.Snapshot, xstats []hw.XStat, app string, appStats any, asJSON bool) {
	xs := map[string]uint64{}
	for _, x := range xstats {
		if x.Value != 0 {
			xs[x.Name] = x.Value
		}
	}
	if asJSON {
		b, _ := json.Marshal(map[string]any{"runtime": s, "xstats": xs, "app": appStats})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	printStatLines(w, s, xs, app, appStats)
}

// printStatLines prints the text form of printServeStats.
func printStatLines(w io.Writer, s rt.Snapshot, xs map[string]uint64, app string, appStats any) {
	for _, sec := range statSections(s, xs, app, appStats) {
		keys := make([]string, 0, len(sec.values))
		for k := range sec.values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%v", k, sec.values[k])
		}
		fmt.Fprintf(w, "%s:%s\n", sec.name, b.String())
	}
}

// statSection is one line of the statistics: a layer's non-zero figures
// by dotted key.
type statSection struct {
	name   string
	values map[string]any
}

// statSections splits the statistics into printStatLines' lines, in
// order.
func statSections(s rt.Snapshot, xs map[string]uint64, app string, appStats any) []statSection {
	var out []statSection
	add := func(name string, v any) {
		flat := map[string]any{}
		flatten("", v, flat)
		out = append(out, statSection{name, flat})
	}
	add("nic", nicLine(s.Port))
	add("nic xstats", xs)
	for _, l := range s.Lcores {
		add(fmt.Sprintf("lcore%d tcp", l.Lcore), l.TCP)
		add(fmt.Sprintf("lcore%d stack", l.Lcore), l.Stack)
		add(fmt.Sprintf("lcore%d driver", l.Lcore), l.Driver)
	}
	add("tcp mem", s.TCPMem)
	add("pool", s.Pool)
	add("app "+app, appStats)
	return out
}

// nicCounters are the port's totals by their DPDK names.
type nicCounters struct {
	IPackets uint64 `json:"ipackets"`
	OPackets uint64 `json:"opackets"`
	IBytes   uint64 `json:"ibytes"`
	OBytes   uint64 `json:"obytes"`
	IMissed  uint64 `json:"imissed"`
	IErrors  uint64 `json:"ierrors"`
	OErrors  uint64 `json:"oerrors"`
	RxNoMbuf uint64 `json:"rx_nombuf"`
}

func nicLine(p hw.EthStats) nicCounters {
	return nicCounters{p.IPackets, p.OPackets, p.IBytes, p.OBytes, p.IMissed, p.IErrors, p.OErrors, p.RxNoMbuf}
}

// flatten turns v's JSON form into dotted keys with non-zero values.
func flatten(prefix string, v any, out map[string]any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	var m any
	if json.Unmarshal(b, &m) != nil {
		return
	}
	var walk func(p string, x any)
	walk = func(p string, x any) {
		switch t := x.(type) {
		case map[string]any:
			for k, e := range t {
				if p != "" {
					walk(p+"."+k, e)
				} else {
					walk(k, e)
				}
			}
		case float64:
			if t != 0 {
				out[p] = int64(t)
			}
		case bool:
			if t {
				out[p] = t
			}
		case string:
			if t != "" {
				out[p] = t
			}
		}
	}
	walk(prefix, m)
}

// watched is what serve lets an operator see while it runs: the
// Prometheus endpoint (--metrics), the control socket (--ctl) and the
// debug log of refused connections.
type watched struct {
	r        *rt.Runtime
	dev      hw.EthDev
	app      string
	appStats func() any
	lat      *gonet.ReadLatency
	started  time.Time
	level    *slog.LevelVar
	log      *slog.Logger
}

// start opens what c asks for and returns the function that closes it
// all (safe to call twice).
func (w *watched) start(c serveConfig) (stop func(), err error) {
	var closers []func()
	stop = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		closers = nil
	}
	if c.metrics != "" {
		ms, err := w.listenMetrics(c.metrics)
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { _ = ms.Close() })
	}
	if c.ctl != "" {
		cs, err := control.Listen(c.ctl, w.handlers(), w.log)
		switch {
		case err != nil && c.ctlDefault:
			w.log.Warn("no control socket: simrun ctl cannot reach this process; give --ctl PATH", "err", err)
		case err != nil:
			stop()
			return nil, err
		default:
			closers = append(closers, func() {
				if err := cs.Close(); err != nil {
					w.log.Error("closing the control socket", "path", c.ctl, "err", err)
				}
			})
		}
	}
	done := make(chan struct{})
	go w.logRefusals(done)
	closers = append(closers, func() { close(done) })
	return stop, nil
}

// handlers are the control socket's commands.
func (w *watched) handlers() map[string]control.Handler {
	return map[string]control.Handler{
		control.CmdShow: func(control.Request) (any, error) {
			s := w.r.Survey(false)
			xs := map[string]uint64{}
			for _, x := range w.dev.XStats() {
				if x.Value != 0 {
					xs[x.Name] = x.Value
				}
			}
			app, err := json.Marshal(w.appStats())
			if err != nil {
				return nil, err
			}
			return control.Totals{App: w.app, UptimeSeconds: time.Since(w.started).Seconds(),
				Runtime: s.Snapshot, XStats: xs, AppStats: app}, nil
		},
		control.CmdSockets: func(control.Request) (any, error) {
			return control.SocketsFrom(w.r.Survey(true).Sockets), nil
		},
		control.CmdLatency: func(control.Request) (any, error) {
			if w.lat == nil {
				return control.LatencyFrom(nil), nil
			}
			return control.LatencyFrom(w.lat.Histogram()), nil
		},
		control.CmdXStats: func(control.Request) (any, error) {
			return control.XStatsFrom(w.dev.XStats()), nil
		},
		control.CmdSetLogLevel: func(req control.Request) (any, error) {
			l, err := parseLogLevel(req.Level)
			if err != nil {
				return nil, fmt.Errorf("set loglevel: %w", err)
			}
			prev := w.level.Level()
			w.level.Set(l)
			w.log.Info("log level set", "level", l.String(), "previous", prev.String())
			return control.LogLevel{Level: l.String(), Previous: prev.String()}, nil
		},
	}
}

// refusalCounters are the TCP counters of connections turned away, by
// the name the debug log gives them.
func refusalCounters(s tcp.Stats) map[string]uint64 {
	return map[string]uint64{
		"conn_limit_refused": s.ConnLimitRefused, "listen_overflows": s.ListenOverflows,
		"listen_drops": s.ListenDrops, "syn_queue_full": s.Drops.SynQueueFull,
		"accept_queue_full": s.Drops.AcceptQueueFull, "no_socket": s.Drops.NoSocket,
	}
}

// logRefusals logs, at debug level, the connections the stack refused in
// each second that had some: the TCP engine counts them but has no log,
// so serve compares the counters once a second, and only while debug
// logging is on (the check then costs nothing).
func (w *watched) logRefusals(done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last map[string]uint64
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if !w.log.Enabled(context.Background(), slog.LevelDebug) {
			last = nil
			continue
		}
		now := map[string]uint64{}
		for _, l := range w.r.Survey(false).Lcores {
			for k, v := range refusalCounters(l.TCP) {
				now[k] += v
			}
		}
		if last != nil {
			keys := make([]string, 0, len(now))
			for k := range now {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var attrs []any
			for _, k := range keys {
				if d := now[k] - last[k]; d > 0 {
					attrs = append(attrs, k, d)
				}
			}
			if attrs != nil {
				w.log.Debug("connections refused in the last second", attrs...)
			}
		}
		last = now
	}
}

// listenMetrics starts the Prometheus endpoint: one Collector whose
// every scrape takes one Survey of the lcores, the xstats, the app's
// counters and the latency histogram.
func (w *watched) listenMetrics(addr string) (*metrics.Server, error) {
	mc, err := metrics.New(metrics.Config{App: w.app, AppStats: w.appStats(), Version: version.Version,
		Read: func() metrics.Reading {
			rd := metrics.Reading{Survey: w.r.Survey(false), XStats: w.dev.XStats(), AppStats: w.appStats()}
			if w.lat != nil {
				rd.Latency = w.lat.Histogram()
			}
			return rd
		}})
	if err != nil {
		return nil, err
	}
	reg, err := metrics.NewRegistry(mc)
	if err != nil {
		return nil, err
	}
	return metrics.Listen(addr, reg, w.log)
}
