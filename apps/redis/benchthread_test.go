package redis_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/redis"
	"github.com/savanna-sim/savanna/apps/resp"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/rss"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// benchThreadBed is a Redis server on a user-space lcore and a Linux
// client: a kernel stack on two NIC queues whose interrupts CPUs 2 and 3
// take, and redis-benchmark's thread on CPU 0.
type benchThreadBed struct {
	eng     *sim.Engine
	client  *simhost.Host
	core    *sim.Core
	bench   *redis.Benchmark
	bridges []*lstack.Bridge
}

const benchRequests = 2000

func newBenchThreadBed() *benchThreadBed {
	eng := sim.NewEngine(8)
	srv := newHost(eng, 0, "server", "10.0.0.1/24")
	s, err := redis.NewServer(srv.in, 6379, resp.NewStore())
	Expect(err).NotTo(HaveOccurred())
	srv.core.Attach(s)
	h, err := simhost.NewHost(eng, simhost.HostConfig{
		NIC: simhost.NICConfig{Name: "client", ID: 1, Queues: 2,
			TxOffloads: hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum,
			RxOffloads: hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum,
			RxRing:     1024, TxRing: 1024, Mbufs: 8192},
		Address: "10.0.0.2/24", Mode: lstack.ModeKernel, TCP: tcp.DefaultConfig(), CPU: 2,
	})
	Expect(err).NotTo(HaveOccurred())
	_, err = nic.NewLink(eng, "wire", srv.port, h.Port, nic.LinkConfig{Latency: 10 * time.Microsecond})
	Expect(err).NotTo(HaveOccurred())
	core, err := h.NewCore(0, false)
	Expect(err).NotTo(HaveOccurred())
	remote := tcp.AddrFrom4([4]byte{10, 0, 0, 1}, 6379)
	net := redis.ThreadNet{Wake: core.Wake}
	router := lstack.NewRouter(32)
	t := rss.NewTable(h.Port.RSSKey())
	for q, in := range h.Instances {
		b, err := lstack.NewBridge(in, router, h.Cores[q].Wake)
		Expect(err).NotTo(HaveOccurred())
		simhost.BindBridge(eng, h.Cores[q], b)
		net.Bridges = append(net.Bridges, b)
		next := uint16(20000)
		net.Ports = append(net.Ports, func(int) uint16 {
			return rss.PortForQueue(t, h.Port.RETA(), q, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 6379, &next, 20000, 65534)
		})
	}
	bench, err := redis.NewThreadBenchmark(redis.BenchConfig{Clients: 20, Requests: benchRequests, Commands: []string{"SET", "GET"}}, net, remote)
	Expect(err).NotTo(HaveOccurred())
	core.AttachAs("redis_benchmark", bench)
	eng.RunUntil(200 * time.Millisecond)
	return &benchThreadBed{eng: eng, client: h, core: core, bench: bench, bridges: net.Bridges}
}

var _ = Describe("redis-benchmark on a thread of its own", func() {
	It("runs on its core, off the CPUs that take the NIC's interrupts", func() {
		b := newBenchThreadBed()
		st := b.bench.Stats(b.eng.Now())
		Expect(st.Finished).To(BeTrue())
		Expect(st.Errors + st.ConnectFailures).To(BeZero())
		Expect(st.Requests).To(BeEquivalentTo(2 * benchRequests))
		// Its connections are spread over both queues' instances.
		for _, br := range b.bridges {
			Expect(br.Stats().Connects).To(BeEquivalentTo(10))
		}
		own := b.core.Stats().Ops
		// The generator's own work and its system calls on its core ...
		Expect(own[redis.CostBenchRequest]).To(BeEquivalentTo(2 * benchRequests))
		Expect(own[hw.CostSyscall]).To(BeNumerically(">", 2*2*benchRequests))
		// ... with its write()s' transmit path, a segment per request ...
		Expect(own[cost.KernelTCPTx]).To(BeNumerically(">=", 2*benchRequests))
		// ... and no interrupt or softirq: those are the queues' CPUs'.
		Expect(own[cost.Interrupt] + own[cost.SoftirqPacket] + own[cost.KernelTCPRx]).To(BeZero())
		for _, c := range b.client.Cores {
			ops := c.Stats().Ops
			Expect(ops[cost.Interrupt]).To(BeNumerically(">", 0))
			Expect(ops[cost.KernelTCPRx]).To(BeNumerically(">=", benchRequests/2))
			Expect(ops[redis.CostBenchRequest]).To(BeZero())
		}
	})

	It("is deterministic: the same seed gives the same figures", func() {
		run := func() any {
			b := newBenchThreadBed()
			return []any{b.bench.Stats(b.eng.Now()), b.core.Stats(), b.client.Cores[0].Stats()}
		}
		Expect(run()).To(Equal(run()))
	})

	It("refuses a thread without a bridge", func() {
		_, err := redis.NewThreadBenchmark(redis.BenchConfig{}, redis.ThreadNet{Wake: func(time.Duration) {}}, tcp.Addr{})
		Expect(err).To(HaveOccurred())
	})
})
