package rig

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/apps/pktgen"
	"github.com/savanna-sim/savanna/apps/testpmd"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// AppCommon are the keys every app has.
type AppCommon struct {
	// Kind selects the app (simrun list --apps shows them).
	Kind string `yaml:"kind"`
	// Name names the app's figures in reports; default the kind with
	// dashes as underscores.
	Name string `yaml:"name"`
}

// PortApp are the keys of apps that drive a NIC queue directly, as DPDK
// applications do.
type PortApp struct {
	// NIC is the host's port the app uses.
	NIC string `yaml:"nic"`
	// Queue is the queue pair; default the next one not taken.
	Queue *int `yaml:"queue"`
	// Core is the CPU the app's lcore runs on.
	Core int `yaml:"core"`
}

// ClientApp are the keys of load generators on a host's stack.
type ClientApp struct {
	// Target is the server's ip:port.
	Target string `yaml:"target"`
}

func (c *ClientApp) targetAddr() string { return c.Target }

// validatedSpec is an app's scenario entry whose config validates
// itself.
type validatedSpec interface {
	Validate() error
}

// clientSpec is a load generator's entry: it also names its target.
type clientSpec interface {
	validatedSpec
	targetAddr() string
}

// stackAppSetup decodes an app's entry into spec, validates it, and finds
// the host's stack the app runs on.
func (w *world) stackAppSetup(h *host, key string, node *yaml.Node, spec validatedSpec) (*hostStack, error) {
	if err := w.v.Decode(key, node, spec); err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, w.v.Errorf(key, "%v", err)
	}
	return w.stackApp(h, key)
}

// clientSetup is stackAppSetup for a load generator, which also resolves
// its target (usualPort is the example the error gives).
func (w *world) clientSetup(h *host, key string, node *yaml.Node, spec clientSpec, usualPort int) (*hostStack, tcp.Addr, error) {
	hs, err := w.stackAppSetup(h, key, node, spec)
	if err != nil {
		return nil, tcp.Addr{}, err
	}
	remote, err := w.target(key, spec.targetAddr(), usualPort)
	if err != nil {
		return nil, tcp.Addr{}, err
	}
	// One family per NIC: a client reaches a target of its own NIC's
	// family only.
	if local := hs.port.ip.Addr(); local.Is6() != remote.IP.Is6() {
		return nil, tcp.Addr{}, w.v.Errorf(key+".target", "%s is not of the family of NIC %s's address %s", remote.IP, hs.port.name, local)
	}
	return hs, remote, nil
}

// runner is an app as the rig drives it.
type runner interface {
	ResetStats(now time.Duration)
	Figures(now time.Duration) any
}

// latencyApp is a runner whose latency distribution report.html plots.
type latencyApp interface {
	Latency() *latency.Recorder
}

// app is one app of a host.
type app struct {
	name string
	host *host
	run  runner
}

// appKind builds one kind of app from its scenario entry.
type appKind struct {
	summary string
	build   func(w *world, h *host, key string, node *yaml.Node) (string, runner, error)
}

// appKinds lists the apps scenarios can run. It is a function, not a
// package variable, so the package keeps no mutable state.
func appKinds() map[string]appKind {
	return map[string]appKind{
		"pktgen":          {summary: "UDP frame generator at a set rate; measures round trips (DPDK pktgen's shape)", build: buildPktgen},
		"testpmd":         {summary: "forwards frames back out of their port, io or macswap (DPDK testpmd's shape)", build: buildTestpmd},
		"redis-server":    {summary: "RESP server: Redis's one event-loop thread on its own core (placement: lcore for one loop per stack core)", build: buildRedisServer},
		"redis-benchmark": {summary: "load generator in redis-benchmark's shape (clients, requests, commands, pipeline)", build: buildRedisBenchmark},
		"http":            {summary: "HTTP/1.1 server in Tengine's shape: a worker per stack core, gzip through the zlib shim (QAT or software), reload", build: buildHTTP},
		"wrk":             {summary: "HTTP load generator in wrk's shape: closed loop, or open loop at a rate (wrk2 -R)", build: buildWrk},
		"oltp-server":     {summary: "MySQL-shaped server in Gazelle's asymmetric model: a thread per connection on application cores, TPC-C statement costs", build: buildOLTPServer},
		"echo-server":     {summary: "echo server (RFC 862) as an event loop per stack core, on a range of ports, with no state per connection", build: buildEchoServer},
		"echo-client":     {summary: "a fleet of mostly idle devices: connections opened at a bounded rate, each sending a small request every interval and reading its echo", build: buildEchoClient},
		"oltp-client":     {summary: "OLTP load generator in benchmarksql 5.0's shape (terminals, TPC-C mix, think time); QPS, tpmC, latency per transaction", build: buildOLTPClient},
	}
}

// AppKinds returns the app kinds with a line on each, sorted by kind.
func AppKinds() [][2]string {
	var out [][2]string
	for k, v := range appKinds() {
		out = append(out, [2]string{k, v.summary})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func (w *world) buildApps(h *host, sh *scenario.Host) error {
	kinds := appKinds()
	for i := range sh.Apps {
		node := &sh.Apps[i]
		key := fmt.Sprintf("%s.apps[%d]", h.key, i)
		kind := scenario.AppKind(node)
		k, ok := kinds[kind]
		if !ok {
			var names []string
			for n := range kinds {
				names = append(names, n)
			}
			sort.Strings(names)
			return w.v.Errorf(key+".kind", "unknown app kind %q; expected one of %s", kind, strings.Join(names, ", "))
		}
		// The app's name is its layer in the CPU profile of the cores it
		// runs on, so it is known before the app is built.
		var common AppCommon
		_ = node.Decode(&common) // strictly decoded by the kind's build below
		name := common.Name
		if name == "" {
			name = strings.ReplaceAll(kind, "-", "_")
		}
		w.appLayer = name
		_, r, err := k.build(w, h, key, node)
		if err != nil {
			return err
		}
		for _, other := range w.apps {
			if other.name == name {
				return w.v.Errorf(key, "two apps are named %q; give one a name key", name)
			}
		}
		if _, clash := w.hosts[name]; clash {
			return w.v.Errorf(key, "app name %q is also a host name; give the app a name key", name)
		}
		w.apps = append(w.apps, &app{name: name, host: h, run: r})
	}
	return nil
}

// attach runs p on core, its work charged to the app being built.
func (w *world) attach(core *sim.Core, p sim.Poller) { core.AttachAs(w.appLayer, p) }

// appMeter is a view of core for a part of the app being built (its
// zlib shim, its QAT driver), nested under the app in the CPU profile.
func (w *world) appMeter(core *sim.Core, part string) *sim.LayerMeter {
	return core.Meter(w.appLayer + ";" + part)
}

// portQueue resolves a port app's NIC, queue and core, and binds the
// queue to the core.
func (w *world) portQueue(h *host, key string, pa PortApp) (*port, int, *sim.Core, error) {
	p := h.nic(pa.NIC)
	if p == nil {
		return nil, 0, nil, w.v.Errorf(key+".nic", "host %s has no NIC %q", h.name, pa.NIC)
	}
	q := p.users
	if pa.Queue != nil {
		q = *pa.Queue
	}
	if q < 0 || q >= len(p.pools) {
		return nil, 0, nil, w.v.Errorf(key+".queue", "NIC %s has %d rx queue(s); queue %d does not exist (set rx_queues on the NIC)", p.name, len(p.pools), q)
	}
	p.users = max(p.users, q+1)
	core, err := h.core(w, pa.Core, true)
	if err != nil {
		return nil, 0, nil, w.v.Errorf(key+".core", "%v", err)
	}
	if err := p.dev.BindQueue(q, core.Meter(w.appLayer+";"+simhost.LayerDriver)); err != nil {
		return nil, 0, nil, w.v.Errorf(key+".queue", "%v", err)
	}
	return p, q, core, nil
}

type pktgenSpec struct {
	AppCommon     `yaml:",inline"`
	PortApp       `yaml:",inline"`
	pktgen.Config `yaml:",inline"`
	// Target is the host.nic the frames are addressed to.
	Target string `yaml:"target"`
}

type pktgenRunner struct{ g *pktgen.Generator }

func (r pktgenRunner) ResetStats(now time.Duration)  { r.g.ResetStats(now) }
func (r pktgenRunner) Figures(now time.Duration) any { return r.g.Stats(now) }
func (r pktgenRunner) Latency() *latency.Recorder    { return r.g.RTT() }
func (r pktgenRunner) Completed(now time.Duration) (uint64, string) {
	return r.g.Stats(now).RxPackets, "frames received"
}

func buildPktgen(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec pktgenSpec
	if err := w.v.Decode(key, node, &spec); err != nil {
		return "", nil, err
	}
	if err := spec.Config.Validate(); err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	p, q, core, err := w.portQueue(h, key, spec.PortApp)
	if err != nil {
		return "", nil, err
	}
	hn, nn, _ := strings.Cut(spec.Target, ".")
	th := w.hosts[hn]
	if th == nil || th.nic(nn) == nil {
		return "", nil, w.v.Errorf(key+".target", "no NIC %q; target names host.nic", spec.Target)
	}
	tp := th.nic(nn)
	if !p.ip.IsValid() || !tp.ip.IsValid() {
		return "", nil, w.v.Errorf(key+".target", "pktgen needs an ip on %s.%s and on %s", h.name, p.name, spec.Target)
	}
	ep := pktgen.Endpoints{SrcMAC: p.dev.MACAddr(), DstMAC: tp.dev.MACAddr(), SrcIP: p.ip.Addr(), DstIP: tp.ip.Addr()}
	g, err := pktgen.New(spec.Config, ep, p.dev, q, p.pools[q])
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	w.attach(core, g)
	return spec.Name, pktgenRunner{g}, nil
}

type testpmdSpec struct {
	AppCommon      `yaml:",inline"`
	PortApp        `yaml:",inline"`
	testpmd.Config `yaml:",inline"`
}

type testpmdRunner struct{ f *testpmd.Forwarder }

func (r testpmdRunner) ResetStats(now time.Duration)  { r.f.ResetStats(now) }
func (r testpmdRunner) Figures(now time.Duration) any { return r.f.Stats(now) }
func (r testpmdRunner) Completed(now time.Duration) (uint64, string) {
	return r.f.Stats(now).TxPackets, "frames forwarded"
}

func buildTestpmd(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec testpmdSpec
	if err := w.v.Decode(key, node, &spec); err != nil {
		return "", nil, err
	}
	p, q, core, err := w.portQueue(h, key, spec.PortApp)
	if err != nil {
		return "", nil, err
	}
	f, err := testpmd.New(spec.Config, p.dev, q)
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	w.attach(core, f)
	return spec.Name, testpmdRunner{f}, nil
}
