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
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// threadsBed is a Redis server on two user-space lcores and a Linux
// client (a kernel stack on two NIC queues, their interrupts on CPUs 4
// and 5) running redis-benchmark --threads N, thread i on CPU i.
type threadsBed struct {
	eng     *sim.Engine
	client  *simhost.Host
	cores   []*sim.Core
	bench   *redis.Benchmark
	bridges []*lstack.Bridge
}

func newThreadsBed(threads, clients, requests int) *threadsBed {
	eng := sim.NewEngine(8)
	nicCfg := func(name string, id uint16) simhost.NICConfig {
		return simhost.NICConfig{Name: name, ID: id, Queues: 2,
			TxOffloads: hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum,
			RxOffloads: hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum,
			RxRing:     1024, TxRing: 1024, Mbufs: 8192}
	}
	srv, err := simhost.NewHost(eng, simhost.HostConfig{NIC: nicCfg("server", 0), Address: "10.0.0.1/24", CPU: 0})
	Expect(err).NotTo(HaveOccurred())
	store := resp.NewStore()
	for q, in := range srv.Instances {
		s, err := redis.NewServer(in, 6379, store)
		Expect(err).NotTo(HaveOccurred())
		srv.Cores[q].Attach(s)
	}
	h, err := simhost.NewHost(eng, simhost.HostConfig{NIC: nicCfg("client", 1),
		Address: "10.0.0.2/24", Mode: lstack.ModeKernel, CPU: 4})
	Expect(err).NotTo(HaveOccurred())
	_, err = nic.NewLink(eng, "wire", srv.Port, h.Port, nic.LinkConfig{Latency: 10 * time.Microsecond})
	Expect(err).NotTo(HaveOccurred())
	remote := tcp.AddrFrom4([4]byte{10, 0, 0, 1}, 6379)
	router := lstack.NewRouter(32)
	t := rss.NewTable(h.Port.RSSKey())
	var shared redis.ThreadNet
	for q, in := range h.Instances {
		b, err := lstack.NewBridge(in, router, h.Cores[q].Wake)
		Expect(err).NotTo(HaveOccurred())
		simhost.BindBridge(eng, h.Cores[q], b)
		shared.Bridges = append(shared.Bridges, b)
		next := uint16(20000)
		shared.Ports = append(shared.Ports, func(int) uint16 {
			return rss.PortForQueue(t, h.Port.RETA(), q, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 6379, &next, 20000, 65534)
		})
	}
	var cores []*sim.Core
	var nets []redis.ThreadNet
	for i := 0; i < threads; i++ {
		core, err := h.NewCore(i, false)
		Expect(err).NotTo(HaveOccurred())
		net := shared
		net.Wake = core.Wake
		cores = append(cores, core)
		nets = append(nets, net)
	}
	bench, err := redis.NewThreadsBenchmark(redis.BenchConfig{Clients: clients, Requests: requests,
		Commands: []string{"SET", "GET"}, Threads: threads}, nets, remote)
	Expect(err).NotTo(HaveOccurred())
	for i, th := range bench.Threads() {
		cores[i].AttachAs("redis_benchmark", th)
	}
	return &threadsBed{eng: eng, client: h, cores: cores, bench: bench, bridges: shared.Bridges}
}

// run runs until every test finished (at most limit) and returns the
// figures.
func (b *threadsBed) run(limit time.Duration) redis.BenchStats {
	for b.eng.Now() < limit {
		b.eng.RunUntil(b.eng.Now() + 10*time.Millisecond)
		if b.bench.Stats(b.eng.Now()).Finished {
			break
		}
	}
	st := b.bench.Stats(b.eng.Now())
	Expect(st.Finished).To(BeTrue())
	Expect(st.Errors + st.ConnectFailures).To(BeZero())
	return st
}

// activeRPS is a test's throughput up to its last reply: its RPS without
// the wait for the threads' throughput tick (checked against the figure
// the generator reports).
func activeRPS(c redis.CommandResult) float64 {
	v := float64(c.Requests) / (float64(c.Requests)/c.RPS - c.StopWaitMS/1e3)
	Expect(c.RPSToLastReply).To(BeNumerically("~", v, v*1e-9))
	return v
}

var _ = Describe("redis-benchmark --threads", func() {
	It("shares the clients among the threads as createMissingClients does, and one request budget per test", func() {
		b := newThreadsBed(3, 20, 3000)
		st := b.run(2 * time.Second)
		// Client k is thread k % 3's: the first 20 % 3 threads have one more.
		Expect(st.Threads).To(HaveLen(3))
		var clients int
		var sum uint64
		perCmd := map[string]uint64{}
		for i, ts := range st.Threads {
			Expect(ts.Clients).To(Equal([]int{7, 7, 6}[i]), "thread %d", i)
			Expect(ts.Connected).To(Equal(ts.Clients), "thread %d", i)
			clients += ts.Clients
			sum += ts.Requests
			for name, n := range ts.Commands {
				Expect(n).To(BeNumerically(">", 0), "thread %d %s", i, name)
				perCmd[name] += n
			}
		}
		Expect(clients).To(Equal(20))
		Expect(st.Connected).To(Equal(20))
		// -n is the test's total, not each thread's: the threads' replies
		// add up to it exactly, and no request more was built.
		Expect(sum).To(Equal(st.Requests))
		Expect(st.Requests).To(BeEquivalentTo(2 * 3000))
		for _, name := range []string{"SET", "GET"} {
			Expect(st.Commands[name].Requests).To(BeEquivalentTo(3000), name)
			Expect(perCmd[name]).To(BeEquivalentTo(3000), name)
			Expect(st.Commands[name].Outstanding).To(BeZero(), name)
		}
		var built int64
		for i, core := range b.cores {
			ops := core.Stats().Ops
			Expect(ops[redis.CostBenchRequest]).To(BeEquivalentTo(st.Threads[i].Requests), "thread %d builds what it is answered", i)
			built += ops[redis.CostBenchRequest]
		}
		Expect(built).To(BeEquivalentTo(2 * 3000))
		// Each thread's connections spread over both queues' bridges:
		// 7 + 7 + 6 clients, 4 + 4 + 3 on the first.
		Expect(b.bridges[0].Stats().Connects).To(BeEquivalentTo(11))
		Expect(b.bridges[1].Stats().Connects).To(BeEquivalentTo(9))
	})

	It("ends a test when its last thread stops, at the throughput tick of the threads that did not take the last reply", func() {
		b := newThreadsBed(2, 20, 3000)
		st := b.run(2 * time.Second)
		begin, end, _, _ := b.bench.Active()
		for _, name := range []string{"SET", "GET"} {
			c := st.Commands[name]
			// The other thread stopped at its showThroughput tick, 250 ms
			// after the test's start (the test's work takes less): the
			// test's time, and so its throughput, is that tick's (and
			// the turn the thread's wait returns in, a few microseconds).
			Expect(c.StopWaitMS).To(BeNumerically(">", 0), name)
			Expect(float64(c.Requests)/c.RPS).To(BeNumerically("~", 0.25, 1e-4), name)
		}
		Expect(end - begin).To(BeNumerically("~", 500*time.Millisecond, 200*time.Microsecond))
	})

	It("with one thread ends a test at its last reply", func() {
		b := newThreadsBed(1, 20, 3000)
		st := b.run(2 * time.Second)
		Expect(st.Threads).To(HaveLen(1))
		Expect(st.Threads[0].Clients).To(Equal(20))
		for _, name := range []string{"SET", "GET"} {
			Expect(st.Commands[name].StopWaitMS).To(BeZero(), name)
		}
	})

	It("doubles a client-bound run's throughput with two threads on two cores", func() {
		// Enough requests that each test outlasts a few ticks.
		one := newThreadsBed(1, 40, 60000).run(5 * time.Second)
		two := newThreadsBed(2, 40, 60000).run(5 * time.Second)
		for _, name := range []string{"SET", "GET"} {
			ratio := activeRPS(two.Commands[name]) / activeRPS(one.Commands[name])
			Expect(ratio).To(BeNumerically(">", 1.8), name)
			Expect(ratio).To(BeNumerically("<", 2.1), name)
			Expect(two.Commands[name].Requests).To(BeEquivalentTo(60000), name)
		}
	})

	It("is deterministic: the same seed gives the same figures", func() {
		run := func() any {
			b := newThreadsBed(3, 20, 3000)
			st := b.run(2 * time.Second)
			return []any{st, b.cores[0].Stats(), b.cores[2].Stats(), b.client.Cores[1].Stats()}
		}
		Expect(run()).To(Equal(run()))
	})

	It("runs thread i on stack instance i's lcore when placed on the lcores", func() {
		eng := sim.NewEngine(3)
		srv := newHost(eng, 0, "server", "10.0.0.1/24")
		s, err := redis.NewServer(srv.in, 6379, resp.NewStore())
		Expect(err).NotTo(HaveOccurred())
		srv.core.Attach(s)
		h, err := simhost.NewHost(eng, simhost.HostConfig{
			NIC: simhost.NICConfig{Name: "client", ID: 1, Queues: 2,
				TxOffloads: hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum,
				RxOffloads: hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum,
				RxRing:     1024, TxRing: 1024, Mbufs: 8192},
			Address: "10.0.0.2/24", CPU: 2,
		})
		Expect(err).NotTo(HaveOccurred())
		_, err = nic.NewLink(eng, "wire", srv.port, h.Port, nic.LinkConfig{Latency: 10 * time.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		t := rss.NewTable(h.Port.RSSKey())
		var nets []redis.LcoreNet
		for q, in := range h.Instances {
			next := uint16(20000)
			nets = append(nets, redis.LcoreNet{Instance: in, Wake: h.Cores[q].Wake, Port: func(int) uint16 {
				return rss.PortForQueue(t, h.Port.RETA(), q, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 6379, &next, 20000, 65534)
			}})
		}
		bench, err := redis.NewLcoreBenchmark(redis.BenchConfig{Clients: 9, Requests: 2000, Commands: []string{"PING", "GET"}, Threads: 2},
			nets, tcp.AddrFrom4([4]byte{10, 0, 0, 1}, 6379))
		Expect(err).NotTo(HaveOccurred())
		for q, th := range bench.Threads() {
			h.Cores[q].AttachAs("redis_benchmark", th)
		}
		eng.RunUntil(time.Second)
		st := bench.Stats(eng.Now())
		Expect(st.Finished).To(BeTrue())
		Expect(st.Errors + st.ConnectFailures).To(BeZero())
		Expect(st.Requests).To(BeEquivalentTo(2 * 2000))
		for q, ts := range st.Threads {
			Expect(ts.Clients).To(Equal([]int{5, 4}[q]))
			// Each lcore builds its own thread's requests, and takes
			// the replies RSS steers to its queue.
			Expect(h.Cores[q].Stats().Ops[redis.CostBenchRequest]).To(BeEquivalentTo(ts.Requests), "lcore %d", q)
			Expect(ts.Requests).To(BeNumerically(">", 0))
		}
	})

	It("refuses a placement per thread that does not match threads:, naming the key", func() {
		cfg := redis.BenchConfig{Threads: 2}
		_, err := redis.NewThreadsBenchmark(cfg, []redis.ThreadNet{{}}, tcp.Addr{})
		Expect(err).To(MatchError(ContainSubstring("threads: 2 but 1")))
		b := newBed(1, nic.LinkConfig{})
		_, err = redis.NewBenchmark(cfg, b.client.in, b.remote, nil)
		Expect(err).To(MatchError(ContainSubstring("threads: 2 but 1")))
		_, err = redis.NewLcoreBenchmark(cfg, []redis.LcoreNet{{Instance: b.client.in}, {Instance: b.client.in}}, b.remote)
		Expect(err).To(MatchError(ContainSubstring("doorbell")))
	})
})
