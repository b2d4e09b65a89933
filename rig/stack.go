package rig

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/apps/resp"
	"github.com/savanna-sim/savanna/internal/rss"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// hostStack is a host's network stack: one instance per stack core, each
// on its own queue pair of the host's NIC.
type hostStack struct {
	mode      lstack.Mode
	port      *port
	instances []*lstack.Instance
	cores     []int
	store     *resp.Store // shared by the host's redis-server apps
}

// buildStack makes the host's stack instances, when the host has a stack.
func (w *world) buildStack(h *host) error {
	st := w.v.File.Hosts[h.name].Stack
	if st == nil {
		return nil
	}
	key := h.key + ".stack"
	if len(st.Cores) == 0 {
		return w.v.Errorf(key+".cores", "a stack needs at least one core (one instance per core)")
	}
	var p *port
	for _, n := range h.nics {
		if n.ip.IsValid() {
			if p != nil {
				return w.v.Errorf(key, "the stack serves one NIC with an ip; this host has several")
			}
			p = n
		}
	}
	if p == nil {
		return w.v.Errorf(key, "the stack needs a NIC with an ip on host %s", h.name)
	}
	if len(p.pools) < len(st.Cores) {
		return w.v.Errorf(key+".cores", "%d stack cores need %d queue pairs; NIC %s has %d (set rx_queues)", len(st.Cores), len(st.Cores), p.name, len(p.pools))
	}
	tcpCfg, err := w.tcpConfig(key, st)
	if err != nil {
		return err
	}
	hs := &hostStack{port: p, cores: st.Cores, store: resp.NewStore()}
	if st.Kind == "kernel" {
		hs.mode = lstack.ModeKernel
	}
	cfg := w.v.File.Hosts[h.name].NICs[indexOf(h, p)].PortConfig
	txOff, _ := nic.ParseTxOffloads(cfg.TxOffloads)
	for q, cpu := range st.Cores {
		core, err := h.core(w, cpu, hs.mode == lstack.ModeLstack)
		if err != nil {
			return w.v.Errorf(fmt.Sprintf("%s.cores[%d]", key, q), "%v", err)
		}
		in, err := lstack.New(lstack.Config{
			Iface:      ifaceConfig(p),
			TCP:        tcpCfg,
			Mode:       hs.mode,
			TxOffloads: txOff,
		}, p.dev, q, p.pools[q], w.eng.RNG(fmt.Sprintf("tcp:%s:%d", h.name, q)))
		if err != nil {
			return w.v.Errorf(key, "%v", err)
		}
		// Packet memory on another node than the core costs what the
		// topology's distance says (sim/numa.PacketMemory).
		// The kernel path's per-connection misses count the instance's
		// connections on its interrupt core and the host's on the
		// application threads' cores (simhost.Placement).
		at := simhost.Placement{RemoteMemory: h.topo.AccessFactor(cpu, p.pools[q].NUMANode()) - 1,
			ConnCache: h.cost.ConnCache(), HostConns: hs.establishedConns}
		if err := simhost.BindStack(core, p.dev, q, in, at); err != nil {
			return w.v.Errorf(key, "%v", err)
		}
		in.Start(w.eng.Now())
		in.SetWake(core.Wake)
		hs.instances = append(hs.instances, in)
	}
	// max_connections holds for the host's whole stack, as Gazelle's does
	// for the process, whichever instance RSS hands a connection to.
	budget := tcp.NewConnBudget(tcpCfg.MaxConns)
	// tcp_mem, too, holds for the host's whole stack, as Linux's does
	// for the host's sockets.
	mem := tcp.NewMemBudget(tcpCfg.Mem)
	for _, in := range hs.instances {
		in.SetPeers(hs.instances)
		in.TCP().SetConnBudget(budget)
		in.TCP().SetMemBudget(mem)
	}
	p.users = len(st.Cores)
	h.stack = hs
	return nil
}

// establishedConns counts the established connections of every
// instance of the host's stack.
func (hs *hostStack) establishedConns() int {
	n := 0
	for _, in := range hs.instances {
		n += simhost.EstablishedConns(in)
	}
	return n
}

func indexOf(h *host, p *port) int {
	for i, n := range h.nics {
		if n == p {
			return i
		}
	}
	return -1
}

// stackFigures reports each instance's counters.
func (hs *hostStack) figures(t report.Tree) {
	for i, in := range hs.instances {
		pre := "stack." + strconv.Itoa(i)
		t.AddStruct(pre+".instance", in.Stats())
		t.AddStruct(pre+".tcp", in.TCP().Stats())
		t.AddStruct(pre+".iface", in.Iface().Stats())
		// Only hosts with IPv6 report its counters, so that IPv4
		// reports keep their figures.
		if in.Iface().HasIPv6() {
			t.AddStruct(pre+".iface6", in.Iface().Stats6())
		}
	}
}

// stackApp finds the instances an app runs on.
func (w *world) stackApp(h *host, key string) (*hostStack, error) {
	if h.stack == nil {
		return nil, w.v.Errorf(key, "this app runs on a network stack; give host %s a stack (stack: {kind: lstack, cores: [...]})", h.name)
	}
	return h.stack, nil
}

// target parses the ip:port a load generator connects to (key.target):
// 10.0.0.1:6379, or [fd00::1]:6379 for IPv6 (RFC 3986 section 3.2.2's
// brackets); the error's example uses the app's usual port.
func (w *world) target(key, target string, usualPort int) (tcp.Addr, error) {
	ap, err := netip.ParseAddrPort(target)
	if err == nil && ap.Addr().Zone() == "" && !ap.Addr().Is4In6() {
		if a, ok := tcp.AddrFromNetip(ap); ok {
			return a, nil
		}
	}
	return tcp.Addr{}, w.v.Errorf(key+".target", "%q is not an address and port such as 10.0.0.1:%d or [fd00::1]:%d", target, usualPort, usualPort)
}

// rssPorts returns a picker of local ports whose replies from remote the
// port's RSS steers to queue q, as user-space stacks choose source ports
// for connections they open (each instance sees only its own queue). A
// single-queue port takes any port. The local address is the port's own
// of remote's family. The cursor is the port's (port.localCursor), so
// the apps of one host never pick one port twice.
func rssPorts(p *port, remote tcp.Addr, q int) func(int) uint16 {
	reta := p.dev.RETA()
	if len(reta) == 0 || len(p.pools) < 2 {
		next := p.localCursor(-1)
		return func(int) uint16 { *next++; return *next - 1 }
	}
	next := p.localCursor(q)
	t := rss.NewTable(p.dev.RSSKey())
	local := p.ip.Addr()
	if remote.IP.Is6() {
		return func(int) uint16 {
			return rss.PortForQueue6(t, reta, q, remote.IP.As16(), local.As16(), remote.Port, next, 20000, 65534)
		}
	}
	return func(int) uint16 {
		return rss.PortForQueue(t, reta, q, remote.IP.As4(), local.As4(), remote.Port, next, 20000, 65534)
	}
}

func sortedKeys(m map[string]yaml.Node) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
