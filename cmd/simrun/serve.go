package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
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
	"github.com/savanna-sim/savanna/stack/gonet"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

const serveUsage = `Usage: simrun serve [--backend tap] --tap NAME --ip CIDR --app kv|echo --port N [--cores K] [--mac M]
       simrun serve --backend dpdk --eal "EAL ARGS" [--dpdk-port NAME] --ip CIDR --app kv|echo --port N [--cores K]

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
`

// maxParkDPDK bounds one park of an idle lcore on a DPDK port: a poll-mode
// driver cannot wake a parked lcore when frames arrive, so the lcore must
// come back to poll soon (--busy never parks, as DPDK applications do).
const maxParkDPDK = 200 * time.Microsecond

// cmdServe implements "simrun serve" (live mode).
func cmdServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, serveUsage); fs.PrintDefaults() }
	backend := fs.String("backend", "tap", "port backend: tap (a Linux TAP) or dpdk (a DPDK port; needs a build with -tags dpdk)")
	tapName := fs.String("tap", "", "with --backend tap: TAP interface to create or attach to")
	eal := fs.String("eal", "", "with --backend dpdk: EAL arguments, split at spaces (vdevs as --vdev=...)")
	dpdkPort := fs.String("dpdk-port", "", "with --backend dpdk: the port's device name (default: the only port probed)")
	cidr := fs.String("ip", "", "the stack's IPv4 address with prefix, e.g. 10.77.0.2/24")
	app := fs.String("app", "", "application: kv or echo")
	port := fs.Int("port", 0, "TCP port the app listens on")
	cores := fs.Int("cores", 1, "stack lcores (port queues)")
	mac := fs.String("mac", "", "with --backend tap: the stack's MAC (default 02:53:56:00:00:02)")
	gateway := fs.String("gateway", "", "default router (optional)")
	mtu := fs.Int("mtu", 1500, "IP MTU")
	busy := fs.Bool("busy", false, "poll at 100% CPU instead of parking idle lcores")
	spin := fs.Duration("spin", rt.DefaultSpin, "how long an idle lcore polls before it parks")
	maxPark := fs.Duration("max-park", 0, "longest park of an idle lcore (default 100ms on a TAP, which wakes lcores; 200µs on DPDK, which cannot)")
	jsonStats := fs.Bool("json", false, "print the final statistics as one JSON object")
	rxLoss := fs.Float64("rx-loss", 0, "with --backend tap: drop this fraction of frames from the kernel (for kernels without netem)")
	rxReorder := fs.Float64("rx-reorder", 0, "with --backend tap: deliver this fraction of frames from the kernel one frame late")
	seed := fs.Uint64("seed", 1, "seed of TCP secrets and impairments")
	if _, err := parseInterleaved(fs, args); err != nil {
		return 2
	}
	switch {
	case *backend == "tap" && *tapName == "":
		fmt.Fprint(stderr, "simrun serve: --tap is required with --backend tap\n\n"+serveUsage)
		return 2
	case *backend == "dpdk" && *eal == "":
		fmt.Fprint(stderr, "simrun serve: --eal is required with --backend dpdk\n\n"+serveUsage)
		return 2
	case *cidr == "" || *port <= 0 || *port > 65535:
		fmt.Fprint(stderr, "simrun serve: --ip and --port are required\n\n"+serveUsage)
		return 2
	case *app != "kv" && *app != "echo":
		fmt.Fprintf(stderr, "simrun serve: --app %q: want kv or echo\n", *app)
		return 2
	case *maxPark < 0:
		fmt.Fprintf(stderr, "simrun serve: --max-park %v: must not be negative\n", *maxPark)
		return 2
	}
	ip, _, err := net.ParseCIDR(*cidr)
	if err != nil || ip.To4() == nil {
		fmt.Fprintf(stderr, "simrun serve: --ip %q: want an IPv4 CIDR such as 10.77.0.2/24\n", *cidr)
		return 2
	}

	be, err := openServeBackend(serveOpts{backend: *backend, tapName: *tapName, mac: *mac, mtu: *mtu,
		cores: *cores, eal: *eal, dpdkPort: *dpdkPort, rxLoss: *rxLoss, rxReord: *rxReorder, seed: *seed})
	if err != nil {
		fmt.Fprintf(stderr, "simrun serve: %v\n", err)
		return 2
	}
	defer be.close()
	dev := be.dev
	rcfg := rt.Config{Lcores: *cores, Busy: *busy, Spin: *spin, NoSpin: *spin == 0, Seed: *seed,
		MaxPark: *maxPark, ThreadHook: be.hook}
	if rcfg.MaxPark == 0 && !be.notifies {
		rcfg.MaxPark = maxParkDPDK
	}
	tcfg := tcp.DefaultConfig()
	if *mtu != 0 {
		tcfg.MTU = *mtu // TCP's path MTU is the link's
	}
	scfg := lstack.Config{Iface: iface.Config{Address: *cidr, Gateway: *gateway, MTU: *mtu}, TCP: tcfg}
	r, err := rt.New(rcfg, scfg, dev, be.pool)
	if err != nil {
		fmt.Fprintf(stderr, "simrun serve: %v\n", err)
		return 2
	}
	if err := r.Start(); err != nil {
		fmt.Fprintf(stderr, "simrun serve: %v\n", err)
		return 2
	}
	defer r.Stop()
	ln, err := gonet.Listen(r, uint16(*port))
	if err != nil {
		fmt.Fprintf(stderr, "simrun serve: %v\n", err)
		return 2
	}

	var serveErr = make(chan error, 1)
	var appStats func() any
	switch *app {
	case "kv":
		s, err := kv.New(kv.Limits{})
		if err != nil {
			fmt.Fprintf(stderr, "simrun serve: %v\n", err)
			return 2
		}
		go func() { serveErr <- s.Serve(ln) }()
		appStats = func() any { return s.Stats() }
	case "echo":
		s := &echo.Server{}
		go func() { serveErr <- s.Serve(ln) }()
		appStats = func() any { return s.Stats() }
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	started := time.Now()
	lc := "lcore"
	if *cores != 1 {
		lc = "lcores"
	}
	fmt.Fprintf(stdout, "savanna: serving %s on %s:%d (%s, %d %s)\n", *app, ip.To4(), *port, be.what, *cores, lc)

	code := 0
	select {
	case s := <-sig:
		fmt.Fprintf(stdout, "savanna: %v after %v, stopping\n", s, time.Since(started).Round(time.Millisecond))
	case err := <-serveErr:
		fmt.Fprintf(stderr, "simrun serve: app stopped: %v\n", err)
		code = 1
	}
	_ = ln.Close()
	snap := r.Snapshot()
	r.Stop()
	printServeStats(stdout, snap, dev.XStats(), *app, appStats(), *jsonStats)
	return code
}

// printServeStats prints the non-zero counters, one line per layer, with
// keys sorted so that the output is stable.
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
	line := func(name string, v any) {
		flat := map[string]any{}
		flatten("", v, flat)
		keys := make([]string, 0, len(flat))
		for k := range flat {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%v", k, flat[k])
		}
		fmt.Fprintf(w, "%s:%s\n", name, b.String())
	}
	line("nic", struct {
		IPackets uint64 `json:"ipackets"`
		OPackets uint64 `json:"opackets"`
		IBytes   uint64 `json:"ibytes"`
		OBytes   uint64 `json:"obytes"`
		IMissed  uint64 `json:"imissed"`
		IErrors  uint64 `json:"ierrors"`
		OErrors  uint64 `json:"oerrors"`
		RxNoMbuf uint64 `json:"rx_nombuf"`
	}{s.Port.IPackets, s.Port.OPackets, s.Port.IBytes, s.Port.OBytes, s.Port.IMissed, s.Port.IErrors, s.Port.OErrors, s.Port.RxNoMbuf})
	line("nic xstats", xs)
	for _, l := range s.Lcores {
		line(fmt.Sprintf("lcore%d tcp", l.Lcore), l.TCP)
		line(fmt.Sprintf("lcore%d stack", l.Lcore), l.Stack)
		line(fmt.Sprintf("lcore%d driver", l.Lcore), l.Driver)
	}
	line("pool", s.Pool)
	line("app "+app, appStats)
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
