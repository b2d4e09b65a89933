package main

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strconv"
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
	"github.com/savanna-sim/savanna/stack/ndp"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

const serveUsage = `Usage: simrun serve [--backend tap] --tap NAME --ip CIDR[,CIDR] --app kv|echo --port N [--cores K] [--mac M]
       simrun serve --backend dpdk --eal "EAL ARGS" [--dpdk-port NAME] --ip CIDR[,CIDR] --app kv|echo --port N [--cores K]
       simrun serve --backend shm --shm PATH --shm-role create|attach --ip CIDR[,CIDR] --app kv|echo --port N
       [--metrics ADDR] [--qat SOCKET] [--ctl PATH|none] [--log-level debug|info|warn|error]
       [--memory-limit SIZE] [--maxmemory SIZE|none] [--maxclients N] [--timeout D]
       [--proto-max-bulk-len SIZE] [--client-query-buffer-limit SIZE]
       [--client-output-buffer-limit "HARD SOFT SECONDS"]
       [--tcp-mem LOW,PRESSURE,HIGH] [--max-conns N] [--conn-limit-action rst|drop]

Runs Savanna's stack in real time with an app, until SIGINT or SIGTERM;
then prints statistics and exits 0.

--ip gives the stack's addresses with their prefix: an IPv4 one, an IPv6
one or one of each, repeated or comma-separated (--ip 10.77.0.2/24 --ip
fd00::2/64, or --ip 10.77.0.2/24,fd00::2/64). With IPv6 the stack also
forms its link-local address from the MAC, runs Neighbor Discovery and
Duplicate Address Detection (an address found in use is logged, counted
in ndp.dad_duplicates and not used), and the app listens on both
families ([::], IPV6_V6ONLY off).

The tap backend (the default) runs on a Linux TAP device whose kernel side
is brought up; give it an address on the same subnet to talk to the stack
(docs/live.md). The dpdk backend (a build with -tags dpdk) runs on a DPDK
port: the EAL arguments pass to rte_eal_init unchanged, split at spaces,
e.g. "--no-huge -m 256 --no-pci --no-shconf -l 0-1
--vdev=net_tap0,iface=svd0" for DPDK's TAP PMD, or "-l 0-3 -a 0000:3b:00.0"
for a NIC bound to vfio-pci. The lcores are registered with the EAL
(docs/real-hardware.md). The shm backend is a point-to-point wire to
another simrun serve over one shared-memory file (hw/shmlink, DPDK
memif's shape, no kernel in the data path): one serve creates PATH (e.g.
/dev/shm/savanna-link), the other attaches to it, waiting up to 10 s;
both need the same --mtu, and one lcore each.

Watching it run (docs/live.md, "Watching a running stack"): --metrics
127.0.0.1:9464 serves Prometheus' text format at /metrics (savanna_*
metrics, process_* and go_*); a control socket, by default
$XDG_RUNTIME_DIR/savanna/serve-PID.sock or /run/savanna/serve-PID.sock,
answers "simrun ctl show" (totals, --rate, --conn, --latency, --xstats)
and "simrun ctl set loglevel LEVEL". Logs go to standard error.

Limits (docs/live.md, "Under attack"): --memory-limit is the process's
whole budget. It sets Go's soft memory limit (GOMEMLIMIT) to 7/8 of it
(the rest for what Go does not count: the binary, the kernel's pages)
and splits it: kv's maxmemory 3/8, TCP's tcp_mem high 5/16 (pressure 1/4,
low 3/16), and the last 5/16 for the Go runtime's garbage, goroutine
stacks, the mbuf pool and each connection's guaranteed minimum. The other flags set one limit each and override the split;
sizes are bytes or take a unit (KiB, MiB, GiB; Redis's kb, mb, gb; k, m,
g are decimal as in redis.conf).
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
	port serveOpts
	// cidr and ip are the IPv4 address (--ip), "" and nil for none;
	// cidr6 and ip6 the IPv6 one.
	cidr    string
	ip      net.IP
	cidr6   string
	ip6     netip.Addr
	gateway string
	app     string
	appPort int
	busy    bool
	spin    time.Duration
	maxPark time.Duration
	json    bool

	// dadTransmits is --dad-transmits: DAD's solicitations per IPv6
	// address.
	dadTransmits int
	// gateway6 is --gateway6: the IPv6 default router, "" for none.
	gateway6 string

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
	// qat is the socket of a QAT device process serve runs beside the
	// stack (simrun qat serve's default device), "" for none.
	qat string
	// preload is the Unix socket preloaded programs reach the stack
	// on (docs/preload.md), "" for none.
	preload string
	// lim is the memory and connection limits.
	lim serveLimits
}

// serveLimits are the limits serve runs with, resolved from
// --memory-limit's split and the flags that override it.
type serveLimits struct {
	// memoryLimit is --memory-limit in bytes, 0 for none.
	memoryLimit int64
	// kv is the app's limits (zero fields take kv's defaults).
	kv kv.Limits
	// tcpMem is tcp_mem, the zero value for tcp's default.
	tcpMem tcp.MemLimits
	// maxConns is the TCP connection limit, 0 for tcp's default.
	maxConns int
	// connLimitAction is "rst" or "drop", "" for tcp's default.
	connLimitAction string
}

// limitFlags are the limit flags as given, "" when absent: absent flags
// keep the split's value or the default.
type limitFlags struct {
	memoryLimit, maxMemory, maxClients, timeout, maxBulk, queryBuf,
	outputBuf, tcpMem, maxConns, connLimitAction string
}

// splitMemoryLimit divides a process budget of m bytes: kv's maxmemory
// 3/8 and TCP's tcp_mem high 5/16, pressure 1/4, low 3/16 (Linux's
// tcp_init_mem keeps low at 3/4 of pressure, as here), leaving 5/16 for
// what neither counts: the Go runtime's garbage between collections
// (goMemoryLimit), goroutine stacks (about 8 KiB a client), the mbuf
// pool, the 16 KiB each kv client may always hold and the 64 KiB window
// each TCP connection may always offer (docs/tcp.md).
func splitMemoryLimit(m int64) (maxMemory int64, mem tcp.MemLimits) {
	return m / 8 * 3, tcp.MemLimits{Low: m / 16 * 3, Pressure: m / 4, High: m / 16 * 5}
}

// goMemoryLimit is Go's soft memory limit for a process budget of m
// bytes: 7/8 of it. Go's limit counts only the memory the runtime maps
// (heap, stacks, its own structures), not the binary's text and data or
// the kernel's pages for the TAP, which RSS counts too; and the runtime
// lets the heap fill up to the limit with garbage before it collects.
// At the whole budget, a live run under attack (hw/tap's hardening
// spec) peaked at VmHWM 1038 MiB for a 1 GiB budget, and at 15/16 of it
// at 991 MiB, too close to hold on another machine; 1/8 is left for what
// Go does not count.
func goMemoryLimit(m int64) int64 { return m - m/8 }

// resolveLimits turns the limit flags into serveLimits, naming the flag
// of the first bad value.
func resolveLimits(f limitFlags) (serveLimits, error) {
	var l serveLimits
	size := func(flag, v string, min int64) (int64, error) {
		n, err := parseServeSize(v)
		if err != nil {
			return 0, fmt.Errorf("--%s: %w", flag, err)
		}
		if n < min {
			return 0, fmt.Errorf("--%s %q: below the least allowed, %d bytes", flag, v, min)
		}
		return n, nil
	}
	count := func(flag, v string, max int) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > max {
			return 0, fmt.Errorf("--%s %q: want a whole number from 1 to %d", flag, v, max)
		}
		return n, nil
	}
	var err error
	if f.memoryLimit != "" {
		// Below 64 MiB the share left to the runtime would not hold the
		// mbuf pool (8192 mbufs of about 1.7 KiB per lcore).
		if l.memoryLimit, err = size("memory-limit", f.memoryLimit, 64<<20); err != nil {
			return l, err
		}
		l.kv.MaxMemory, l.tcpMem = splitMemoryLimit(l.memoryLimit)
	}
	switch strings.ToLower(strings.TrimSpace(f.maxMemory)) {
	case "":
	case "none", "0":
		l.kv.MaxMemory = -1 // Redis's maxmemory 0: no limit
	default:
		if l.kv.MaxMemory, err = size("maxmemory", f.maxMemory, 1<<20); err != nil {
			return l, err
		}
	}
	if f.maxClients != "" {
		if l.kv.MaxClients, err = count("maxclients", f.maxClients, 1<<20); err != nil {
			return l, err
		}
	}
	if f.timeout != "" {
		if l.kv.Timeout, err = parseServeTimeout(f.timeout); err != nil {
			return l, err
		}
	}
	if f.maxBulk != "" {
		n, err := size("proto-max-bulk-len", f.maxBulk, 1)
		if err != nil {
			return l, err
		}
		if n > 1<<30 {
			return l, fmt.Errorf("--proto-max-bulk-len %q: above 1 GiB, the largest argument kv takes", f.maxBulk)
		}
		l.kv.MaxBulk = int(n)
	}
	if f.queryBuf != "" {
		// Redis's own minimum for client-query-buffer-limit (config.c).
		if l.kv.QueryBufferLimit, err = size("client-query-buffer-limit", f.queryBuf, 1<<20); err != nil {
			return l, err
		}
	}
	if f.outputBuf != "" {
		if l.kv.OutputBufferHard, l.kv.OutputBufferSoft, l.kv.OutputBufferSoftTime, err = parseOutputBufferLimit(f.outputBuf); err != nil {
			return l, err
		}
	}
	if f.tcpMem != "" {
		parts := strings.Split(f.tcpMem, ",")
		if len(parts) != 3 {
			return l, fmt.Errorf("--tcp-mem %q: want LOW,PRESSURE,HIGH, e.g. 192MiB,256MiB,384MiB", f.tcpMem)
		}
		var v [3]int64
		for i, p := range parts {
			if v[i], err = size("tcp-mem", p, 0); err != nil {
				return l, err
			}
		}
		l.tcpMem = tcp.MemLimits{Low: v[0], Pressure: v[1], High: v[2]}
		if v[0] > v[1] || v[1] > v[2] || v[2] == 0 {
			return l, fmt.Errorf("--tcp-mem %q: want LOW <= PRESSURE <= HIGH and HIGH above 0", f.tcpMem)
		}
	}
	if f.maxConns != "" {
		if l.maxConns, err = count("max-conns", f.maxConns, 1<<24); err != nil {
			return l, err
		}
	}
	switch f.connLimitAction {
	case "", tcp.ConnLimitRST, tcp.ConnLimitDrop:
		l.connLimitAction = f.connLimitAction
	default:
		return l, fmt.Errorf("--conn-limit-action %q: want %s or %s", f.connLimitAction, tcp.ConnLimitRST, tcp.ConnLimitDrop)
	}
	if err := l.kv.Validate(); err != nil {
		return l, fmt.Errorf("kv limits: %w", err)
	}
	if m := l.memoryLimit; m > 0 {
		// The overrides must leave the runtime its share: a budget the
		// parts exceed cannot hold.
		if l.kv.MaxMemory < 0 {
			return l, fmt.Errorf("--maxmemory none: --memory-limit %s needs kv's maxmemory bounded", f.memoryLimit)
		}
		if got := l.kv.MaxMemory + l.tcpMem.High; got > m-m/4 {
			return l, fmt.Errorf("--memory-limit %s: kv's maxmemory (%s) and tcp_mem's high (%s) leave less than 1/4 of it to the runtime", f.memoryLimit, formatServeSize(l.kv.MaxMemory), formatServeSize(l.tcpMem.High))
		}
	}
	return l, nil
}

// parseServeSize reads a size as redis.conf writes one (memtoull in
// Redis's util.c: b, k = 1000, kb = 1024, m, mb, g, gb, any case) or with
// a binary unit (KiB, MiB, GiB, TiB).
func parseServeSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: want a whole number of bytes with an optional unit, e.g. 512MiB or 1gb", s)
	}
	var mul int64
	switch strings.ToLower(strings.TrimSpace(t[i:])) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb", "kib":
		mul = 1 << 10
	case "m":
		mul = 1000 * 1000
	case "mb", "mib":
		mul = 1 << 20
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb", "gib":
		mul = 1 << 30
	case "tib", "tb":
		mul = 1 << 40
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q (want b, k, kb, KiB, m, mb, MiB, g, gb, GiB, TiB)", s, t[i:])
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n > math.MaxInt64/mul {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n * mul, nil
}

// formatServeSize writes a size in the largest binary unit that divides
// it, as the limits line shows it.
func formatServeSize(n int64) string {
	switch {
	case n < 0:
		return "none"
	case n != 0 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n != 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n != 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// parseServeTimeout reads --timeout: whole seconds as redis.conf's
// timeout, or a Go duration ("10s", "1m30s"); 0 is never, as Redis's.
func parseServeTimeout(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	d, err := time.ParseDuration(t)
	if err != nil {
		n, nerr := strconv.ParseInt(t, 10, 64)
		if nerr != nil || n > int64(math.MaxInt64/time.Second) {
			return 0, fmt.Errorf("--timeout %q: want seconds (as redis.conf's timeout) or a duration such as 10s; 0 for never", s)
		}
		d = time.Duration(n) * time.Second
	}
	switch {
	case d < 0:
		return 0, fmt.Errorf("--timeout %q: must not be negative (0 for never)", s)
	case d == 0:
		return -1, nil // kv's "never"
	case d < time.Millisecond:
		return 0, fmt.Errorf("--timeout %q: below 1ms", s)
	}
	return d, nil
}

// parseOutputBufferLimit reads client-output-buffer-limit's "HARD SOFT
// SECONDS" (redis.conf; a leading class "normal" is allowed, the only
// class kv has). A size of 0 is no limit, as in Redis; kv's no limit is
// negative.
func parseOutputBufferLimit(s string) (hard, soft int64, softTime time.Duration, err error) {
	f := strings.Fields(s)
	if len(f) == 4 && strings.EqualFold(f[0], "normal") {
		f = f[1:]
	}
	if len(f) != 3 {
		return 0, 0, 0, fmt.Errorf("--client-output-buffer-limit %q: want \"HARD SOFT SECONDS\" as in redis.conf, e.g. \"256mb 64mb 60\"", s)
	}
	off := func(n int64) int64 {
		if n == 0 {
			return -1
		}
		return n
	}
	if hard, err = parseServeSize(f[0]); err != nil {
		return 0, 0, 0, fmt.Errorf("--client-output-buffer-limit hard: %w", err)
	}
	if soft, err = parseServeSize(f[1]); err != nil {
		return 0, 0, 0, fmt.Errorf("--client-output-buffer-limit soft: %w", err)
	}
	secs, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || secs < 0 || secs > 1<<31 {
		return 0, 0, 0, fmt.Errorf("--client-output-buffer-limit seconds %q: want a whole number of seconds", f[2])
	}
	if hard != 0 && soft > hard {
		return 0, 0, 0, fmt.Errorf("--client-output-buffer-limit %q: the soft limit exceeds the hard one", s)
	}
	softTime = time.Duration(secs) * time.Second
	if softTime == 0 {
		// Redis's 0 seconds closes a client at the soft limit at once;
		// kv's zero is its default, so the least wait stands for it.
		softTime = time.Nanosecond
	}
	return off(hard), off(soft), softTime, nil
}

// apply sets the TCP limits on the stack's configuration.
func (l serveLimits) apply(c *tcp.Config) {
	if l.tcpMem != (tcp.MemLimits{}) {
		c.Mem = l.tcpMem
	}
	if l.maxConns != 0 {
		c.MaxConns = l.maxConns
	}
	if l.connLimitAction != "" {
		c.ConnLimitAction = l.connLimitAction
	}
}

// effectiveLimits are the limits in force, as the start-up log and the
// final statistics show them.
type effectiveLimits struct {
	MemoryLimit      string `json:"memory_limit"`
	GoMemLimit       string `json:"go_memory_limit"`
	MaxMemory        string `json:"maxmemory,omitempty"`
	MaxClients       int    `json:"maxclients,omitempty"`
	Timeout          string `json:"timeout,omitempty"`
	MaxBulk          string `json:"proto_max_bulk_len,omitempty"`
	QueryBufferLimit string `json:"client_query_buffer_limit,omitempty"`
	OutputBuffer     string `json:"client_output_buffer_limit,omitempty"`
	TCPMem           string `json:"tcp_mem"`
	MaxConns         int    `json:"max_conns"`
	ConnLimitAction  string `json:"conn_limit_action"`
}

// effective fills the defaults in: what app and tcfg (the stack's
// configuration once applied) actually run with.
func (l serveLimits) effective(app string, tcfg tcp.Config, goLimit int64) effectiveLimits {
	e := effectiveLimits{MemoryLimit: "none", GoMemLimit: "none",
		TCPMem:   fmt.Sprintf("%s,%s,%s", formatServeSize(tcfg.Mem.Low), formatServeSize(tcfg.Mem.Pressure), formatServeSize(tcfg.Mem.High)),
		MaxConns: tcfg.MaxConns, ConnLimitAction: tcfg.ConnLimitAction}
	if l.memoryLimit > 0 {
		e.MemoryLimit = formatServeSize(l.memoryLimit)
	}
	if goLimit > 0 && goLimit < math.MaxInt64 {
		e.GoMemLimit = formatServeSize(goLimit)
	}
	if app == "kv" {
		k := l.kv.WithDefaults()
		e.MaxMemory, e.MaxClients, e.MaxBulk = formatServeSize(k.MaxMemory), k.MaxClients, formatServeSize(int64(k.MaxBulk))
		e.QueryBufferLimit = formatServeSize(k.QueryBufferLimit)
		e.Timeout = "never"
		if k.Timeout > 0 {
			e.Timeout = k.Timeout.String()
		}
		e.OutputBuffer = fmt.Sprintf("%s %s %v", formatServeSize(k.OutputBufferHard), formatServeSize(k.OutputBufferSoft), k.OutputBufferSoftTime)
	}
	return e
}

// attrs is e as slog attributes, in a fixed order.
func (e effectiveLimits) attrs() []any {
	a := []any{"memory_limit", e.MemoryLimit, "go_memory_limit", e.GoMemLimit}
	if e.MaxMemory != "" {
		a = append(a, "maxmemory", e.MaxMemory, "maxclients", e.MaxClients, "timeout", e.Timeout,
			"proto_max_bulk_len", e.MaxBulk, "client_query_buffer_limit", e.QueryBufferLimit,
			"client_output_buffer_limit", e.OutputBuffer)
	}
	return append(a, "tcp_mem", e.TCPMem, "max_conns", e.MaxConns, "conn_limit_action", e.ConnLimitAction)
}

// line is e as the final statistics' "limits:" line.
func (e effectiveLimits) line() string {
	var b strings.Builder
	b.WriteString("limits:")
	a := e.attrs()
	for i := 0; i < len(a); i += 2 {
		fmt.Fprintf(&b, " %s=%v", a[i], strings.ReplaceAll(fmt.Sprint(a[i+1]), " ", "/"))
	}
	return b.String()
}

// parseServeFlags parses and checks serve's flags. On a refusal it prints
// the reason and returns the exit code (2) with ok false.
func parseServeFlags(args []string, stderr io.Writer) (c serveConfig, code int, ok bool) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, serveUsage); fs.PrintDefaults() }
	o := &c.port
	fs.StringVar(&o.backend, "backend", "tap", "port backend: tap (a Linux TAP), dpdk (a DPDK port; needs a build with -tags dpdk) or shm (a shared-memory link to another serve)")
	fs.StringVar(&o.tapName, "tap", "", "with --backend tap: TAP interface to create or attach to")
	fs.StringVar(&o.eal, "eal", "", "with --backend dpdk: EAL arguments, split at spaces (vdevs as --vdev=...)")
	fs.StringVar(&o.dpdkPort, "dpdk-port", "", "with --backend dpdk: the port's device name (default: the only port probed)")
	fs.StringVar(&o.shmPath, "shm", "", "with --backend shm: the shared-memory link's file, e.g. /dev/shm/savanna-link")
	fs.StringVar(&o.shmRole, "shm-role", "", "with --backend shm: create (make the file) or attach (to the other serve's)")
	var ips serveIPs
	fs.Var(&ips, "ip", "the stack's addresses with prefix, one of each family at most, repeated or comma-separated: e.g. 10.77.0.2/24, fd00::2/64 or 10.77.0.2/24,fd00::2/64")
	fs.StringVar(&c.app, "app", "", "application: kv or echo")
	fs.IntVar(&c.appPort, "port", 0, "TCP port the app listens on")
	fs.IntVar(&o.cores, "cores", 1, "stack lcores (port queues)")
	fs.StringVar(&o.mac, "mac", "", "with --backend tap or shm: the stack's MAC (default 02:53:56:00:00:02 on a TAP; 02:53:4d:00:00:01 and :02 for shm's create and attach)")
	fs.StringVar(&c.gateway, "gateway", "", "default router (optional)")
	fs.IntVar(&o.mtu, "mtu", 1500, "IP MTU")
	fs.StringVar(&c.gateway6, "gateway6", "", "IPv6: default router (e.g. fe80::1, its link-local address, or an address on the link), put on the default router list for good (RFC 4861 section 6.3.4's list; never expires, advertisements do not remove it) and resolved by Neighbor Discovery; the IPv6 counterpart of --gateway")
	fs.IntVar(&c.dadTransmits, "dad-transmits", 1, "IPv6: Neighbor Solicitations Duplicate Address Detection sends for each address, 1 s apart (RFC 4862 DupAddrDetectTransmits, Linux's dad_transmits); 0 turns DAD off")
	fs.BoolVar(&c.busy, "busy", false, "poll at 100% CPU instead of parking idle lcores")
	fs.DurationVar(&c.spin, "spin", rt.DefaultSpin, "how long an idle lcore polls before it parks")
	fs.DurationVar(&c.maxPark, "max-park", 0, "longest park of an idle lcore (default 100ms on a TAP, which wakes lcores; 200µs on DPDK, which cannot)")
	fs.BoolVar(&c.json, "json", false, "print the final statistics as one JSON object")
	fs.Float64Var(&o.rxLoss, "rx-loss", 0, "with --backend tap: drop this fraction of frames from the kernel (for kernels without netem)")
	fs.Float64Var(&o.rxReord, "rx-reorder", 0, "with --backend tap: deliver this fraction of frames from the kernel one frame late")
	seed := fs.String("seed", "", "seed of TCP secrets (ISNs, SYN cookies, IPv6 flow labels) and of the impairments; default: drawn at start from crypto/rand and logged, because RFC 6528 asks for an ISN secret no one can guess; give the logged value to repeat a run's impairments")
	fs.StringVar(&c.metrics, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics, e.g. 127.0.0.1:9464 (default: off)")
	ctl := fs.String("ctl", "", "control socket for simrun ctl (default "+control.DefaultDir()+"/serve-PID.sock; none: no socket)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error (simrun ctl set loglevel changes it)")
	fs.StringVar(&c.qat, "qat", "", "also run a simulated QAT device process (a c62x, as simrun qat serve's default) on this Unix socket, for programs run with simrun exec --qat SOCKET; its statistics print at exit")
	fs.StringVar(&c.preload, "preload", "", "also serve programs run with libsavanna_preload.so (simrun exec --stack SOCKET) on this Unix socket: their TCP sockets run on this stack (docs/preload.md)")
	fs.BoolVar(&c.latency, "read-latency", true, "record read latency for simrun ctl show --latency and savanna_read_latency_seconds")
	var lf limitFlags
	fs.StringVar(&lf.memoryLimit, "memory-limit", "", "the process's memory budget, e.g. 1GiB: sets GOMEMLIMIT to 7/8 of it and splits into kv's maxmemory (3/8) and tcp_mem (high 5/16, pressure 1/4, low 3/16) (default: none)")
	fs.StringVar(&lf.maxMemory, "maxmemory", "", "kv: maxmemory, e.g. 512mb; none (or 0) for no limit (default: the split, else 1GiB)")
	fs.StringVar(&lf.maxClients, "maxclients", "", "kv: maxclients (default 10000)")
	fs.StringVar(&lf.timeout, "timeout", "", "kv: close clients idle this long, seconds or a duration such as 10s; 0 for never (default 300s)")
	fs.StringVar(&lf.maxBulk, "proto-max-bulk-len", "", "kv: the largest argument (default 512mb)")
	fs.StringVar(&lf.queryBuf, "client-query-buffer-limit", "", "kv: the most one client's unexecuted input may hold, at least 1mb (default 1gb)")
	fs.StringVar(&lf.outputBuf, "client-output-buffer-limit", "", `kv: "HARD SOFT SECONDS" as redis.conf's normal class, 0 for no limit (default "1gb 64mb 60")`)
	fs.StringVar(&lf.tcpMem, "tcp-mem", "", "TCP buffer budget LOW,PRESSURE,HIGH, e.g. 192MiB,256MiB,384MiB (default: the split, else 1536MiB,2GiB,3GiB)")
	fs.StringVar(&lf.maxConns, "max-conns", "", "TCP connections of all states, shared by the lcores (default 20000)")
	fs.StringVar(&lf.connLimitAction, "conn-limit-action", "", "what a SYN past --max-conns gets: rst or drop (default rst)")
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
	case o.backend == "shm" && (o.shmPath == "" || o.shmRole != "create" && o.shmRole != "attach"):
		return refuse("--shm PATH and --shm-role create|attach are required with --backend shm\n\n" + serveUsage)
	case len(ips) == 0 || c.appPort <= 0 || c.appPort > 65535:
		return refuse("--ip and --port are required\n\n" + serveUsage)
	case c.app != "kv" && c.app != "echo":
		return refuse("--app %q: want kv or echo\n", c.app)
	case c.maxPark < 0:
		return refuse("--max-park %v: must not be negative\n", c.maxPark)
	}
	if err := c.setAddrs(ips); err != nil {
		return refuse("%v\n", err)
	}
	var err error
	if o.seed, err = parseServeSeed(*seed); err != nil {
		return refuse("--seed %q: want an unsigned integer (%v)\n", *seed, err)
	}
	if c.lim, err = resolveLimits(lf); err != nil {
		return refuse("%v\n", err)
	}
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

// parseServeSeed reads --seed; empty draws one from crypto/rand. A live
// stack's TCP secrets must differ from run to run (RFC 6528 section 3:
// the ISN function's secret key should be unpredictable), where a
// simulated run's seed is fixed so that its report repeats.
func parseServeSeed(s string) (uint64, error) {
	if s == "" {
		var b [8]byte
		if _, err := cryptorand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("crypto/rand: %w", err)
		}
		return binary.LittleEndian.Uint64(b[:]), nil
	}
	return strconv.ParseUint(s, 10, 64)
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
		s, err := kv.New(c.lim.kv)
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
	c.lim.apply(&tcfg)
	if err := tcfg.Validate(); err != nil {
		return fail(fmt.Errorf("tcp limits: %w", err))
	}
	if c.lim.memoryLimit > 0 {
		// The collector runs before the heap passes the budget rather
		// than at twice the live bytes (GOGC's default), so that garbage
		// never takes the process past it.
		debug.SetMemoryLimit(goMemoryLimit(c.lim.memoryLimit))
	}
	lims := c.lim.effective(c.app, tcfg, debug.SetMemoryLimit(-1))
	log.Info("limits", lims.attrs()...)
	scfg := lstack.Config{Iface: c.ifaceConfig(), TCP: tcfg}
	r, err := rt.New(rcfg, scfg, dev, be.pool)
	if err != nil {
		return fail(err)
	}
	if err := r.Start(); err != nil {
		return fail(err)
	}
	defer r.Stop()
	pre, err := startPreload(c.preload, r)
	if err != nil {
		return fail(err)
	}
	defer pre.close()
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
	var qatDev *qatDevice
	if c.qat != "" {
		d, _ := startQATDevice(qatServeFlags{socket: c.qat, model: "c62x"}, "simrun serve: --qat", stderr)
		if d == nil {
			_ = ln.Close()
			return 2
		}
		qatDev = d
		defer d.close()
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
	log.Info("serving", "app", c.app, "addr", c.listenAddrs(), "port", be.what,
		"lcores", c.port.cores, "metrics", c.metrics, "ctl", c.ctl, "seed", c.port.seed, "pid", os.Getpid())
	fmt.Fprintf(stdout, "savanna: serving %s on %s (%s, %d %s)\n", c.app, c.listenAddrs(), be.what, c.port.cores, lc)
	dadDone := make(chan struct{})
	defer close(dadDone)
	go watchDAD(r, log, dadDone)

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
	printServeStats(stdout, snap, dev.XStats(), c.app, app.stats(), lims, c.json)
	pre.print(stdout, c.json)
	if qatDev != nil {
		t := qatDev.srv.Telemetry()
		qatDev.close()
		if err := printTelemetry(stdout, t, c.json); err != nil {
			fmt.Fprintf(stderr, "simrun serve: --qat: %v\n", err)
		}
	}
	log.Info("stopped")
	return code
}

// printServeStats prints the non-zero counters, one line per layer, with
// keys sorted so that the output is stable. simrun ctl show prints the
// same lines while serve runs.
func printServeStats(w io.Writer, s rt.Snapshot, xstats []hw.XStat, app string, appStats any, lims effectiveLimits, asJSON bool) {
	xs := map[string]uint64{}
	for _, x := range xstats {
		if x.Value != 0 {
			xs[x.Name] = x.Value
		}
	}
	if asJSON {
		b, _ := json.Marshal(map[string]any{"runtime": s, "xstats": xs, "app": appStats, "limits": lims})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	printStatLines(w, s, xs, app, appStats)
	fmt.Fprintln(w, lims.line())
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
	for _, l := range s.Lcores {
		if l.Iface6 != nil {
			add(fmt.Sprintf("lcore%d ipv6", l.Lcore), *l.Iface6)
		}
	}
	if len(s.Lcores) > 0 && len(s.Lcores[0].Addrs6) > 0 {
		// Lcore 0's: every lcore runs DAD on the same addresses.
		addrs := map[string]any{}
		for _, a := range s.Lcores[0].Addrs6 {
			addrs[a.Prefix().String()] = a.State
		}
		out = append(out, statSection{"ipv6 addrs", addrs})
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

// serveIPs is --ip's values: repeated, each comma-separated.
type serveIPs []string

// String implements flag.Value.
func (s *serveIPs) String() string { return strings.Join(*s, ",") }

// Set implements flag.Value.
func (s *serveIPs) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

// setAddrs sorts --ip's values by family, at most one of each, and
// checks them (with --gateway and --mtu, which depend on them) by the
// stack's own rules, naming the flag.
func (c *serveConfig) setAddrs(ips serveIPs) error {
	for _, v := range ips {
		p, err := netip.ParsePrefix(v)
		if err != nil || p.Addr().Zone() != "" {
			return fmt.Errorf("--ip %q: want an address with its prefix length, IPv4 or IPv6, e.g. 10.77.0.2/24 or fd00::2/64", v)
		}
		switch a := p.Addr(); {
		case a.Is4() || a.Is4In6():
			if c.cidr != "" {
				return fmt.Errorf("--ip %q: a second IPv4 address (%s given already): give at most one of each family", v, c.cidr)
			}
			c.cidr, c.ip = netip.PrefixFrom(a.Unmap(), p.Bits()).String(), net.IP(a.Unmap().AsSlice())
		default:
			if c.cidr6 != "" {
				return fmt.Errorf("--ip %q: a second IPv6 address (%s given already): give at most one of each family", v, c.cidr6)
			}
			c.cidr6, c.ip6 = v, a
		}
	}
	if c.dadTransmits < 0 || c.dadTransmits > 10 {
		return fmt.Errorf("--dad-transmits %d: want 0..10", c.dadTransmits)
	}
	if c.gateway6 != "" {
		if c.cidr6 == "" {
			return fmt.Errorf("--gateway6 %s: needs an IPv6 --ip", c.gateway6)
		}
		if _, err := netip.ParseAddr(c.gateway6); err != nil {
			return fmt.Errorf("--gateway6 %q: not an IPv6 address (e.g. fe80::1)", c.gateway6)
		}
	}
	if err := c.ifaceConfig().Validate(); err != nil {
		flagOf := map[string]string{"address": "--ip " + c.cidr, "ipv6.address": "--ip " + c.cidr6, "ipv6.nd.default_router": "--gateway6 " + c.gateway6,
			"gateway": "--gateway", "mtu": fmt.Sprintf("--mtu %d", c.port.mtu)}
		key, _, _ := strings.Cut(err.Error(), ":")
		if f, ok := flagOf[key]; ok {
			return fmt.Errorf("%s: %v", f, err)
		}
		return fmt.Errorf("--ip: %v", err)
	}
	return nil
}

// ifaceConfig is the stack's interface as the flags give it.
func (c serveConfig) ifaceConfig() iface.Config {
	ic := iface.Config{Address: c.cidr, IPv6: iface.IPv6Config{Address: c.cidr6}, Gateway: c.gateway, MTU: c.port.mtu}
	if c.cidr6 != "" && (c.dadTransmits != 1 || c.gateway6 != "") {
		nd := ndp.DefaultConfig()
		nd.DupAddrDetectTransmits = c.dadTransmits
		nd.DefaultRouter, _ = netip.ParseAddr(c.gateway6) // checked by setAddrs
		ic.IPv6.ND, ic.IPv6.NDSet = nd, true
	}
	return ic
}

// listenAddrs names where the app listens, for the ready line:
// "10.77.0.2:6379", "[fd00::2]:6379" or both joined by " and ".
func (c serveConfig) listenAddrs() string {
	var out []string
	if c.cidr != "" {
		out = append(out, fmt.Sprintf("%s:%d", c.ip, c.appPort))
	}
	if c.cidr6 != "" {
		out = append(out, netip.AddrPortFrom(c.ip6, uint16(c.appPort)).String())
	}
	return strings.Join(out, " and ")
}

// watchDAD logs the outcome of Duplicate Address Detection for each IPv6
// address (RFC 4862 section 5.4): info when an address is assigned,
// a warning when another node has it (section 5.4.5: it is not used; the
// stack counts it in ndp.dad_duplicates and lists it as duplicate). It
// asks lcore 0 every 50 ms until no address is tentative or done closes.
func watchDAD(r *rt.Runtime, log *slog.Logger, done <-chan struct{}) {
	if !r.HasIPv6() {
		return
	}
	seen := map[netip.Prefix]string{}
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		tentative := false
		for _, a := range r.Addrs6() {
			if a.State == "tentative" {
				tentative = true
				continue
			}
			if seen[a.Prefix()] == a.State {
				continue
			}
			seen[a.Prefix()] = a.State
			if a.State == "duplicate" {
				log.Warn("ipv6 address is a duplicate: another node on the link has it (DAD, RFC 4862 section 5.4.5); not used",
					"addr", a.Prefix().String(), "origin", a.Origin)
			} else {
				log.Info("ipv6 address assigned", "addr", a.Prefix().String(), "origin", a.Origin, "state", a.State)
			}
		}
		if !tentative {
			return
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}
