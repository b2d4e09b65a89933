package oltp_test

import (
	"fmt"
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/oltp"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/sim/numa"
	"github.com/savanna-sim/savanna/stack/iface"
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
}

type bedConfig struct {
	mode      lstack.Mode
	appCores  int
	terminals int
	seed      uint64
	costs     oltp.QueryCosts
	maxConns  int
}

func newHost(eng *sim.Engine, id uint16, name, addr string, mode lstack.Mode) (*lstack.Instance, *sim.Core, *nic.Port) {
	topo, err := numa.Preset("xeon-e5-2650v2-2p")
	Expect(err).NotTo(HaveOccurred())
	mem, err := numa.NewMemory(topo, &numa.HugepageConfig{Pages2M: []int64{256}})
	Expect(err).NotTo(HaveOccurred())
	port, err := nic.NewPort(eng, id, nic.PortConfig{Name: name, Model: "hi1822-25g"})
	Expect(err).NotTo(HaveOccurred())
	txOff := hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum
	rxOff := hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum
	Expect(port.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, TxOffloads: txOff, RxOffloads: rxOff})).To(Succeed())
	pool, err := nic.NewMempool(name+".pool", 8192, nic.DefaultMbufSize, 0, mem)
	Expect(err).NotTo(HaveOccurred())
	Expect(port.SetupRxQueue(0, 1024, pool)).To(Succeed())
	Expect(port.SetupTxQueue(0, 1024)).To(Succeed())
	Expect(port.Start()).To(Succeed())
	core := sim.NewCore(eng, 0, 0, cost.Default().Prices(2.6), mode == lstack.ModeLstack)
	in, err := lstack.New(lstack.Config{Iface: iface.Config{Address: addr}, TCP: tcp.DefaultConfig(), Mode: mode, TxOffloads: txOff},
		port, 0, pool, eng.RNG("tcp:"+name))
	Expect(err).NotTo(HaveOccurred())
	in.Start(eng.Now())
	Expect(simhost.BindStack(core, port, 0, in)).To(Succeed())
	return in, core, port
}

func newBed(c bedConfig) *bed {
	eng := sim.NewEngine(c.seed)
	sin, score, sport := newHost(eng, 0, "server", "10.0.0.1/24", c.mode)
	cin, ccore, cport := newHost(eng, 1, "client", "10.0.0.2/24", lstack.ModeLstack)
	_, err := nic.NewLink(eng, "wire", sport, cport, nic.LinkConfig{Latency: 10 * time.Microsecond})
	Expect(err).NotTo(HaveOccurred())

	b := &bed{eng: eng, stack: score}
	router := lstack.NewRouter(32)
	b.bridge, err = lstack.NewBridge(sin, router, score.Wake)
	Expect(err).NotTo(HaveOccurred())
	score.Attach(b.bridge)
	sched := oltp.NewScheduler()
	prices := cost.Default().Prices(2.6)
	for i := 0; i < c.appCores; i++ {
		core := sim.NewCore(eng, 10+i, 0, prices, false)
		core.Attach(sched.AddCPU(core.Wake, 0))
		b.appCores = append(b.appCores, core)
	}
	if c.maxConns == 0 {
		c.maxConns = 1000
	}
	b.server, err = oltp.NewServer(oltp.ServerConfig{MaxConnections: c.maxConns, Costs: c.costs}, sched, router, []*lstack.Bridge{b.bridge})
	Expect(err).NotTo(HaveOccurred())

	next := uint16(20000)
	ep := oltp.Endpoint{Instance: cin, Remote: tcp.Addr{IP: [4]byte{10, 0, 0, 1}, Port: 3306},
		Port: func(int) uint16 { next++; return next }}
	b.client, err = oltp.NewClient(oltp.ClientConfig{Terminals: c.terminals}, []oltp.Endpoint{ep}, eng.RNG("client"))
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
