package rt

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/rss"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// RxNotifier is implemented by devices that can wake a parked lcore when
// frames arrive on a queue (ringdev's SetRxNotify, the TAP's fd watcher).
type RxNotifier interface {
	SetRxNotify(q int, fn func()) error
}

// Runtime is a port driven in real time by one or more lcores.
type Runtime struct {
	cfg    Config
	dev    hw.EthDev
	pool   hw.Mempool
	lcores []*Lcore
	start  time.Time

	rss  bool
	key  []byte
	rssT *rss.Table // key's Toeplitz table
	reta []uint16
	// rss6: the port's RSS also spreads TCP/IPv6 flows (when the device
	// offers it), so a dial over IPv6 may use any lcore.
	rss6 bool
	addr [4]byte
	// has4 and has6 say which families the stack has; addr6 and ll6 are
	// its configured IPv6 address and the link-local one formed from the
	// MAC (RFC 4862 section 5.3), zero without IPv6.
	has4, has6 bool
	addr6, ll6 [16]byte

	dialNext atomic.Uint32
	// mem is the TCP memory budget the lcores share.
	mem *tcp.MemBudget

	startOnce sync.Once
	stopOnce  sync.Once
	started   atomic.Bool
}

// New configures dev with one queue pair per lcore (RSS over TCP/IPv4
// flows when there are several), sets the queues up with mbufs from pool
// (which must be safe for concurrent use, such as ringdev.Mempool), and
// makes one lstack.Instance per lcore. Start runs them.
func New(cfg Config, stackCfg lstack.Config, dev hw.EthDev, pool hw.Mempool) (*Runtime, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("rt: %w", err)
	}
	cfg = cfg.WithDefaults()
	k := cfg.Lcores
	info := dev.Info()
	if info.MaxRxQueues < k || info.MaxTxQueues < k {
		return nil, fmt.Errorf("rt: lcores: %d; port %s offers %d rx and %d tx queues", k, info.DriverName, info.MaxRxQueues, info.MaxTxQueues)
	}
	conf := hw.PortConf{RxQueues: k, TxQueues: k, MTU: stackCfg.Iface.MTU, TxOffloads: stackCfg.TxOffloads}
	if k > 1 && info.RSSHashTypes&hw.RSSIPv4TCP != 0 {
		conf.RSSHashTypes = hw.RSSIPv4 | hw.RSSIPv4TCP
	}
	if k > 1 && stackCfg.Iface.HasIPv6() && info.RSSHashTypes&hw.RSSIPv6TCP != 0 {
		conf.RSSHashTypes |= hw.RSSIPv6 | hw.RSSIPv6TCP
	}
	if err := dev.Configure(conf); err != nil {
		return nil, fmt.Errorf("rt: %w", err)
	}
	r := &Runtime{cfg: cfg, dev: dev, pool: pool, start: time.Now()}
	for q := 0; q < k; q++ {
		if err := dev.SetupRxQueue(q, cfg.RxRing, pool); err != nil {
			return nil, fmt.Errorf("rt: %w", err)
		}
		if err := dev.SetupTxQueue(q, cfg.TxRing); err != nil {
			return nil, fmt.Errorf("rt: %w", err)
		}
	}
	if err := dev.Start(); err != nil {
		return nil, fmt.Errorf("rt: %w", err)
	}
	if conf.RSSHashTypes != 0 {
		r.rss, r.key, r.reta = true, dev.RSSKey(), dev.RETA()
		if len(r.reta) == 0 || len(r.key) < 16 {
			r.rss = false
		} else {
			r.rssT = rss.NewTable(r.key)
			r.rss6 = conf.RSSHashTypes&hw.RSSIPv6TCP != 0
		}
	}
	// One memory budget and one connection limit for the process, as
	// Linux's tcp_mem holds for the host and Gazelle's max_connections
	// for the process, whichever lcore RSS hands a connection to.
	if stackCfg.MemBudget == nil {
		stackCfg.MemBudget = tcp.NewMemBudget(stackCfg.TCP.Mem)
	}
	if stackCfg.ConnBudget == nil {
		stackCfg.ConnBudget = tcp.NewConnBudget(stackCfg.TCP.MaxConns)
	}
	r.mem = stackCfg.MemBudget
	seed := rand.New(rand.NewPCG(cfg.Seed, uint64(k)))
	for q := 0; q < k; q++ {
		rng := rand.New(rand.NewPCG(seed.Uint64(), seed.Uint64()))
		inst, err := lstack.New(stackCfg, dev, q, pool, rng)
		if err != nil {
			return nil, fmt.Errorf("rt: lcore %d: %w", q, err)
		}
		lc := &Lcore{id: q, rt: r, inst: inst, meter: NewMeter(r.start), cfg: cfg,
			wake: make(chan struct{}, 1), done: make(chan struct{}),
			conns: make(map[*tcp.Conn]ConnHandler), listeners: make(map[*tcp.Listener]ListenerHandler),
			nextPort: uint16(32768 + rng.IntN(28232))}
		r.lcores = append(r.lcores, lc)
		if n, ok := dev.(RxNotifier); ok {
			if err := n.SetRxNotify(q, lc.Wake); err != nil {
				return nil, fmt.Errorf("rt: lcore %d: %w", q, err)
			}
		}
	}
	shareARP(r.lcores)
	ifc := r.lcores[0].inst.Iface()
	r.addr, r.has4, r.has6 = ifc.Addr(), ifc.HasIPv4(), ifc.HasIPv6()
	r.addr6, r.ll6 = ifc.Addr6(), ifc.LinkLocal6()
	return r, nil
}

// Start launches the lcores and returns once each has started its
// instance. It fails only when Config.ThreadHook fails for an lcore; the
// lcores already started are then stopped.
func (r *Runtime) Start() error {
	var err error
	r.startOnce.Do(func() {
		for i, lc := range r.lcores {
			started := make(chan error, 1)
			go lc.loop(started)
			if err = <-started; err != nil {
				err = fmt.Errorf("rt: lcore %d: thread hook: %w", lc.id, err)
				r.lcores = r.lcores[:i]
				break
			}
		}
		r.started.Store(true)
		if err != nil {
			r.Stop()
		}
	})
	return err
}

// Stop stops the lcores and waits for them. Sockets still open fail with
// ErrStopped-derived errors. The port is stopped too.
func (r *Runtime) Stop() {
	r.stopOnce.Do(func() {
		for _, lc := range r.lcores {
			lc.stopping.Store(true)
			lc.Wake()
			select {
			case lc.wake <- struct{}{}:
			default:
			}
		}
		if r.started.Load() {
			for _, lc := range r.lcores {
				<-lc.done
			}
		}
		_ = r.dev.Stop()
	})
}

// Lcores returns the lcores.
func (r *Runtime) Lcores() []*Lcore { return r.lcores }

// Dev returns the port.
func (r *Runtime) Dev() hw.EthDev { return r.dev }

// Addr returns the stack's IPv4 address (zero on an IPv6-only stack).
func (r *Runtime) Addr() [4]byte { return r.addr }

// HasIPv4 reports whether the stack has an IPv4 address.
func (r *Runtime) HasIPv4() bool { return r.has4 }

// HasIPv6 reports whether the stack speaks IPv6.
func (r *Runtime) HasIPv6() bool { return r.has6 }

// Addr6 returns the stack's configured IPv6 address (zero without IPv6).
// It is usable once Duplicate Address Detection passed: Addrs6 says.
func (r *Runtime) Addr6() [16]byte { return r.addr6 }

// LinkLocal6 returns the link-local address formed from the MAC (RFC
// 4291 section 2.5.6, RFC 4862 section 5.3; zero without IPv6).
func (r *Runtime) LinkLocal6() [16]byte { return r.ll6 }

// DialLcore returns the lcore an outgoing connection should use: round
// robin with RSS (the local port is then chosen so that replies land on
// that lcore's queue, see LocalPortFor), lcore 0 otherwise.
func (r *Runtime) DialLcore() *Lcore {
	if !r.rss {
		return r.lcores[0]
	}
	return r.lcores[int(r.dialNext.Add(1))%len(r.lcores)]
}

// DialLcore6 is DialLcore for a connection over IPv6: round robin when
// the port's RSS hashes TCP/IPv6 flows (LocalPortFor6), lcore 0
// otherwise, where a port that hashes IPv4 only delivers IPv6 frames.
func (r *Runtime) DialLcore6() *Lcore {
	if !r.rss6 {
		return r.lcores[0]
	}
	return r.lcores[int(r.dialNext.Add(1))%len(r.lcores)]
}

// LocalPortFor6 is LocalPortFor for a connection over IPv6 (RSS over
// the IPv6 4-tuple, Microsoft's RSS specification), or 0 when the port
// does not hash TCP/IPv6. Lcore only.
func (lc *Lcore) LocalPortFor6(local [16]byte, remote tcp.Addr) uint16 {
	r := lc.rt
	if !r.rss6 {
		return 0
	}
	return rss.PortForQueue6(r.rssT, r.reta, lc.id, remote.IP.As16(), local, remote.Port, &lc.nextPort, 32768, 60999)
}

// LocalPortFor returns an ephemeral port for a connection from local to
// remote whose replies the port's RSS steers to lc's queue, or 0 (let TCP
// choose) without RSS. Lcore only. The caller retries on ErrAddrInUse.
func (lc *Lcore) LocalPortFor(local [4]byte, remote tcp.Addr) uint16 {
	r := lc.rt
	if !r.rss {
		return 0
	}
	return rss.PortForQueue(r.rssT, r.reta, lc.id, remote.IP.As4(), local, remote.Port, &lc.nextPort, 32768, 60999)
}

// LcoreSnapshot is one lcore's counters.
type LcoreSnapshot struct {
	Lcore  int          `json:"lcore"`
	Driver LcoreStats   `json:"driver"`
	Stack  lstack.Stats `json:"stack"`
	Iface  iface.Stats  `json:"iface"`
	// Iface6 is the IPv6 side's counters (IPv6, ICMPv6, ND, DAD, MLD,
	// path MTU), nil on a stack without IPv6.
	Iface6 *iface.Stats6 `json:"iface6,omitempty"`
	// Addrs6 is the lcore's IPv6 addresses with their Duplicate Address
	// Detection state, nil without IPv6.
	Addrs6 []Addr6   `json:"addrs6,omitempty"`
	TCP    tcp.Stats `json:"tcp"`
	Conns  int       `json:"conns"`
}

// Snapshot is the runtime's counters.
type Snapshot struct {
	Lcores []LcoreSnapshot `json:"lcores"`
	Port   hw.EthStats     `json:"port"`
	Pool   hw.MempoolStats `json:"pool"`
	// ARPCopyDrops counts copies of ARP frames that could not be handed
	// to a peer lcore (no mbuf, which the peer's no_mbuf counts too, or
	// a full hand-off ring).
	ARPCopyDrops uint64 `json:"arp_copy_drops"`
	// TCPMem is the TCP memory budget the lcores share (tcp_mem).
	TCPMem tcp.MemBudgetStats `json:"tcp_mem"`
}

// Snapshot collects the counters, asking running lcores for theirs (so
// nothing is read while an lcore writes it) and reading stopped ones
// directly.
func (r *Runtime) Snapshot() Snapshot { return r.Survey(false).Snapshot }
