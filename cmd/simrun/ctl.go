package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/savanna-sim/savanna/apps/echo"
	"github.com/savanna-sim/savanna/apps/kv"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/control"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

const ctlUsage = `Usage: simrun ctl [--socket PATH] [--json] show [--rate [--count N] [--interval D] | --conn | --latency | --xstats]
       simrun ctl [--socket PATH] [--json] set loglevel debug|info|warn|error

Asks a running simrun serve, over its control socket, what gazellectl
lstack show asks a Gazelle process:

  show             every counter, as serve prints them when it stops
  show --rate      the counters that moved, per second, every --interval
                   (1s) until Ctrl-C or --count samples
  show --conn      one line per socket: lcore, local and remote address,
                   state, send and receive queue bytes (TCP's and the
                   socket rings'), smoothed RTT, congestion window
  show --latency   percentiles of read latency: the time from bytes
                   entering a socket's empty receive ring to the app's Read
  show --xstats    the port's extended statistics, zeros included
  set loglevel L   serve's log level from now on

--socket defaults to the only serve-*.sock in ` + "$XDG_RUNTIME_DIR/savanna, or /run/savanna" + `
(serve's --ctl). --json prints each answer as one JSON object (one per
line with --rate).
`

// ctlGauges are the keys of show's figures that are levels, not counts:
// --rate leaves them out (a rate of a level means nothing). They follow
// the rule internal/metrics applies to the same structs: signed fields
// are gauges, but time counted in nanoseconds; unsigned ones counters,
// but tcp's curr_estab.
var ctlGauges = gaugeNames(tcp.Stats{}, tcp.MemBudgetStats{}, lstack.Stats{}, rt.LcoreStats{}, hw.MempoolStats{}, kv.Stats{}, echo.Stats{})

// gaugeNames returns the JSON names of the gauges among vs' fields.
func gaugeNames(vs ...any) map[string]bool {
	out := map[string]bool{"curr_estab": true}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			switch f.Type.Kind() {
			case reflect.Struct:
				walk(f.Type)
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				if !strings.HasSuffix(name, "_nanos") {
					out[name] = true
				}
			}
		}
	}
	for _, v := range vs {
		walk(reflect.TypeOf(v))
	}
	return out
}

// ctlFlags are simrun ctl's settings once parsed.
type ctlFlags struct {
	socket   string
	json     bool
	rate     bool
	count    int
	interval time.Duration
	conn     bool
	latency  bool
	xstats   bool
	timeout  time.Duration
}

// cmdCtl implements "simrun ctl".
func cmdCtl(args []string, stdout, stderr io.Writer) int {
	var f ctlFlags
	fs := flag.NewFlagSet("ctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, ctlUsage); fs.PrintDefaults() }
	fs.StringVar(&f.socket, "socket", "", "serve's control socket (serve --ctl)")
	fs.BoolVar(&f.json, "json", false, "print answers as JSON")
	fs.BoolVar(&f.rate, "rate", false, "show: counters per second, refreshed every --interval")
	fs.IntVar(&f.count, "count", 0, "show --rate: stop after N samples (default: until Ctrl-C)")
	fs.DurationVar(&f.interval, "interval", time.Second, "show --rate: time between samples")
	fs.BoolVar(&f.conn, "conn", false, "show: one line per socket")
	fs.BoolVar(&f.latency, "latency", false, "show: read latency percentiles")
	fs.BoolVar(&f.xstats, "xstats", false, "show: the port's extended statistics")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "longest wait for an answer")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "simrun ctl: "+format+"\n\n"+ctlUsage, a...)
		return 2
	}
	n := 0
	for _, b := range []bool{f.rate, f.conn, f.latency, f.xstats} {
		if b {
			n++
		}
	}
	switch {
	case len(pos) == 0:
		return usage("say what to do: show or set loglevel LEVEL")
	case pos[0] == "show" && len(pos) != 1:
		return usage("show takes no argument (got %q); its views are flags: --rate, --conn, --latency, --xstats", pos[1:])
	case pos[0] == "show" && n > 1:
		return usage("show: --rate, --conn, --latency and --xstats are one each")
	case pos[0] == "set" && (len(pos) != 3 || pos[1] != "loglevel"):
		return usage("set: want set loglevel debug|info|warn|error")
	case pos[0] != "show" && pos[0] != "set":
		return usage("unknown command %q: want show or set", pos[0])
	case f.interval <= 0:
		return usage("--interval %v: must be positive", f.interval)
	case f.count < 0:
		return usage("--count %d: must not be negative", f.count)
	case f.timeout <= 0:
		return usage("--timeout %v: must be positive", f.timeout)
	}
	if pos[0] == "set" {
		if _, err := parseLogLevel(pos[2]); err != nil {
			return usage("set loglevel: %v", err)
		}
	}
	path := f.socket
	if path == "" {
		if path, err = control.FindSocket(); err != nil {
			fmt.Fprintf(stderr, "simrun ctl: %v\n", err)
			return 1
		}
	}
	c, err := control.Dial(path, f.timeout)
	if err != nil {
		fmt.Fprintf(stderr, "simrun ctl: %v\n", err)
		return 1
	}
	defer c.Close()
	switch {
	case pos[0] == "set":
		err = ctlSetLogLevel(c, pos[2], f, stdout)
	case f.rate:
		err = ctlRate(c, f, stdout)
	case f.conn:
		err = ctlConns(c, f, stdout)
	case f.latency:
		err = ctlLatency(c, f, stdout)
	case f.xstats:
		err = ctlXStats(c, f, stdout)
	default:
		err = ctlShow(c, f, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun ctl: %v\n", err)
		return 1
	}
	return 0
}

// printJSON prints v as one line.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func ctlShow(c *control.Client, f ctlFlags, w io.Writer) error {
	var t control.Totals
	if err := c.Call(control.Request{Cmd: control.CmdShow}, &t); err != nil {
		return err
	}
	if f.json {
		return printJSON(w, t)
	}
	fmt.Fprintf(w, "app %s, up %v\n", t.App, secondsDuration(t.UptimeSeconds).Round(time.Millisecond))
	printStatLines(w, t.Runtime, t.XStats, t.App, t.AppStats)
	return nil
}

// ctlRateSample is one line of show --rate --json.
type ctlRateSample struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	UptimeSeconds   float64 `json:"uptime_seconds"`
	// Rates are per second, by "section.key" as show's lines name them
	// ("lcore0 tcp.in_segs"), for the counters that moved.
	Rates map[string]float64 `json:"rates"`
}

// ctlRate samples show every interval and prints what moved, per
// second, until --count samples or SIGINT/SIGTERM.
func ctlRate(c *control.Client, f ctlFlags, w io.Writer) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	take := func() (control.Totals, map[string]float64, error) {
		var t control.Totals
		if err := c.Call(control.Request{Cmd: control.CmdShow}, &t); err != nil {
			return t, nil, err
		}
		return t, rateKeys(t), nil
	}
	prevT, prev, err := take()
	if err != nil {
		return err
	}
	tick := time.NewTicker(f.interval)
	defer tick.Stop()
	for n := 0; f.count == 0 || n < f.count; n++ {
		select {
		case <-sig:
			return nil
		case <-tick.C:
		}
		t, cur, err := take()
		if err != nil {
			return err
		}
		dt := t.UptimeSeconds - prevT.UptimeSeconds
		s := ctlRateSample{IntervalSeconds: dt, UptimeSeconds: t.UptimeSeconds, Rates: map[string]float64{}}
		for k, v := range cur {
			if d := v - prev[k]; d > 0 && dt > 0 {
				s.Rates[k] = d / dt
			}
		}
		prevT, prev = t, cur
		if f.json {
			if err := printJSON(w, s); err != nil {
				return err
			}
			continue
		}
		printRates(w, s)
	}
	return nil
}

// rateKeys flattens show's counters to "section.key" numbers, gauges
// left out.
func rateKeys(t control.Totals) map[string]float64 {
	out := map[string]float64{}
	for _, sec := range statSections(t.Runtime, t.XStats, t.App, t.AppStats) {
		for k, v := range sec.values {
			last := k[strings.LastIndexByte(k, '.')+1:]
			if n, ok := v.(int64); ok && !ctlGauges[last] {
				out[sec.name+"."+k] = float64(n)
			}
		}
	}
	return out
}

// printRates prints one sample as show's lines: per section, the keys
// that moved with their rate per second.
func printRates(w io.Writer, s ctlRateSample) {
	bySec := map[string][]string{}
	var secs []string
	for k := range s.Rates {
		sec, key, _ := strings.Cut(k, ".")
		if _, ok := bySec[sec]; !ok {
			secs = append(secs, sec)
		}
		bySec[sec] = append(bySec[sec], key)
	}
	sort.Strings(secs)
	fmt.Fprintf(w, "-- per second over %.2fs, up %v\n", s.IntervalSeconds, secondsDuration(s.UptimeSeconds).Round(time.Second))
	for _, sec := range secs {
		keys := bySec[sec]
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%.1f", k, s.Rates[sec+"."+k])
		}
		fmt.Fprintf(w, "%s:%s\n", sec, b.String())
	}
}

func ctlConns(c *control.Client, f ctlFlags, w io.Writer) error {
	var s control.Sockets
	if err := c.Call(control.Request{Cmd: control.CmdSockets}, &s); err != nil {
		return err
	}
	if f.json {
		return printJSON(w, s)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "LCORE\tLOCAL\tREMOTE\tSTATE\tSEND-Q\tRECV-Q\tTX-RING\tRX-RING\tSRTT\tCWND")
	for _, x := range s.Sockets {
		remote, srtt, cwnd := x.Remote, "-", "-"
		if remote == "" {
			remote = "*"
		}
		if x.State != "LISTEN" {
			srtt, cwnd = time.Duration(x.SRTTNanos).Round(time.Microsecond).String(), fmt.Sprint(x.Cwnd)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", x.Lcore, x.Local, remote, x.State,
			x.SendQueue, x.RecvQueue, x.TxRing, x.RxRing, srtt, cwnd)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d sockets\n", len(s.Sockets))
	return nil
}

func ctlLatency(c *control.Client, f ctlFlags, w io.Writer) error {
	var l control.Latency
	if err := c.Call(control.Request{Cmd: control.CmdLatency}, &l); err != nil {
		return err
	}
	if f.json {
		return printJSON(w, l)
	}
	if !l.Enabled {
		return errors.New("serve records no read latency (it was started with --read-latency=false)")
	}
	ns := func(v int64) string { return time.Duration(v).String() }
	fmt.Fprintf(w, "read latency: %s\n%d reads", l.What, l.Count)
	if l.Count == 0 {
		fmt.Fprintln(w)
		return nil
	}
	fmt.Fprintf(w, ", min %s, mean %s, max %s\n", ns(l.MinNanos), ns(int64(l.MeanNanos)), ns(l.MaxNanos))
	for _, p := range l.Percentiles {
		fmt.Fprintf(w, "  p%-6g %s\n", p.Percentile, ns(p.Nanos))
	}
	return nil
}

func ctlXStats(c *control.Client, f ctlFlags, w io.Writer) error {
	var x control.XStats
	if err := c.Call(control.Request{Cmd: control.CmdXStats}, &x); err != nil {
		return err
	}
	if f.json {
		return printJSON(w, x)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, s := range x.XStats {
		fmt.Fprintf(tw, "%s\t%d\n", s.Name, s.Value)
	}
	return tw.Flush()
}

func ctlSetLogLevel(c *control.Client, level string, f ctlFlags, w io.Writer) error {
	var l control.LogLevel
	if err := c.Call(control.Request{Cmd: control.CmdSetLogLevel, Level: level}, &l); err != nil {
		return err
	}
	if f.json {
		return printJSON(w, l)
	}
	fmt.Fprintf(w, "log level %s (was %s)\n", l.Level, l.Previous)
	return nil
}

// secondsDuration turns float seconds into a Duration.
func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
