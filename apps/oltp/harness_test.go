package oltp_test

import (
	"fmt"
	"github.com/savanna-sim/savanna/internal/costops"
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/oltp"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// bed is a server host (one stack instance, a bridge, appCores cores for
// mysqld's threads) and a client host (one instance running the
// terminals), joined by a 10 us link.
type bed struct {
	eng      *sim.Engine
	server   *oltp.Server
	client   *oltp.Client
	bridge   *lstack.Bridge
	appCores []*sim.Core
	stack    *sim.Core
	clients  *sim.Core // the client host's core, the terminals' event loop
}

type bedConfig struct {
	mode      lstack.Mode
	appCores  int
	terminals int
	seed      uint64
	costs     oltp.QueryCosts
	maxConns  int
	innodb    oltp.InnoDBConfig
	// warehouses and weights are the client's (0 and nil: its defaults).
	warehouses int
	weights    *oltp.Weights
}

// newHost builds a host whose instance runs in mode, on 1024-entry rings
// and 8192 mbufs with IPv4 and TCP checksums offloaded. Both hosts' stack
// cores are CPU 0 of their machines.
func newHost(eng *sim.Engine, id uint16, name, addr string, mode lstack.Mode) (*lstack.Instance, *sim.Core, *nic.Port) {
	h, err := simhost.NewHost(eng, simhost.HostConfig{
		NIC: simhost.NICConfig{Name: name, ID: id,
			TxOffloads: hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum,
			RxOffloads: hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum,
			RxRing:     1024, TxRing: 1024, Mbufs: 8192},
		Address: addr, Mode: mode, TCP: tcp.DefaultConfig(),
	})
	Expect(err).NotTo(HaveOccurred())
	return h.Instance, h.Core, h.Port
}

func newBed(c bedConfig) *bed {
	eng := sim.NewEngine(c.seed)
	sin, score, sport := newHost(eng, 0, "server", "10.0.0.1/24", c.mode)
	cin, ccore, cport := newHost(eng, 1, "client", "10.0.0.2/24", lstack.ModeLstack)
	_, err := nic.NewLink(eng, "wire", sport, cport, nic.LinkConfig{Latency: 10 * time.Microsecond})
	Expect(err).NotTo(HaveOccurred())

	b := &bed{eng: eng, stack: score, clients: ccore}
	router := lstack.NewRouter(32)
	b.bridge, err = lstack.NewBridge(sin, router, score.Wake)
	Expect(err).NotTo(HaveOccurred())
	simhost.BindBridge(eng, score, b.bridge)
	sched := oltp.NewScheduler()
	prices := cost.For(costops.Table()).Default().Prices(2.6)
	for i := 0; i < c.appCores; i++ {
		core := sim.NewCore(eng, 10+i, 0, prices, false)
		core.Attach(sched.AddCPU(core.Wake, 0))
		b.appCores = append(b.appCores, core)
	}
	if c.maxConns == 0 {
		c.maxConns = 1000
	}
	b.server, err = oltp.NewServer(oltp.ServerConfig{MaxConnections: c.maxConns, Costs: c.costs, InnoDB: c.innodb}, sched, router, []*lstack.Bridge{b.bridge})
	Expect(err).NotTo(HaveOccurred())

	next := uint16(20000)
	ep := oltp.Endpoint{Instance: cin, Remote: tcp.AddrFrom4([4]byte{10, 0, 0, 1}, 3306),
		Port: func(int) uint16 { next++; return next }}
	b.client, err = oltp.NewClient(oltp.ClientConfig{Terminals: c.terminals, Warehouses: c.warehouses, Weights: c.weights}, []oltp.Endpoint{ep}, eng.RNG("client"))
	Expect(err).NotTo(HaveOccurred())
	ccore.Attach(b.client.Sites()[0])
	return b
}

// run runs a warm-up, resets the statistics, then runs the window.
func (b *bed) run(warmup, window time.Duration) {
	b.eng.RunUntil(warmup)
	b.client.ResetStats(b.eng.Now())
	b.server.ResetStats(b.eng.Now())
	for _, c := range b.appCores {
		c.ResetStats()
	}
	b.stack.ResetStats()
	b.eng.RunUntil(warmup + window)
}

// appOps sums an op's count over the application cores.
func (b *bed) appOps(op hw.CostOp) int64 {
	var n int64
	for _, c := range b.appCores {
		n += c.Stats().Ops[op]
	}
	return n
}

func (b *bed) String() string {
	return fmt.Sprintf("client %+v", b.client.Stats(b.eng.Now()))
}
