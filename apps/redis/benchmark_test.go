package redis_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/apps/redis"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
)

// benchBed is a server and a redis-benchmark against it.
type benchBed struct {
	*bed
	srv   *redis.Server
	bench *redis.Benchmark
}

func newBenchBed(seed uint64, link nic.LinkConfig, cfg redis.BenchConfig) *benchBed {
	b := newBed(seed, link)
	srv, err := redis.NewServer(b.server.in, 6379, b.store)
	Expect(err).NotTo(HaveOccurred())
	b.server.core.Attach(srv)
	next := uint16(20000)
	bench, err := redis.NewBenchmark(cfg, b.client.in, b.remote, func(int) uint16 { next++; return next })
	Expect(err).NotTo(HaveOccurred())
	b.client.core.Attach(bench)
	return &benchBed{bed: b, srv: srv, bench: bench}
}

// runSampling runs until end in steps of step, returning the most
// requests outstanding seen at a step.
func (b *benchBed) runSampling(end, step time.Duration) uint64 {
	var most uint64
	for t := b.eng.Now() + step; t <= end; t += step {
		b.eng.RunUntil(t)
		most = max(most, b.bench.Stats(t).Outstanding)
	}
	return most
}

var _ = Describe("Benchmark", func() {
	It("runs each command's test in turn, with the configured requests", func() {
		b := newBenchBed(1, nic.LinkConfig{}, redis.BenchConfig{Clients: 4, Requests: 300, Commands: []string{"ping", "SET", "get"}})
		b.eng.RunUntil(200 * time.Millisecond)
		s := b.bench.Stats(b.eng.Now())
		Expect(s.Finished).To(BeTrue())
		Expect(s.Commands).To(HaveLen(3))
		var prevEnd float64
		for _, name := range []string{"PING", "SET", "GET"} {
			c := s.Commands[name]
			Expect(c.Finished).To(BeTrue(), name)
			Expect(c.Requests).To(Equal(uint64(300)), name)
			Expect(c.Outstanding).To(BeZero(), name)
			Expect(c.RPS).To(BeNumerically(">", 0), name)
			Expect(c.P50MS).To(BeNumerically("<=", c.P99MS), name)
			Expect(c.P99MS).To(BeNumerically("<=", c.MaxMS), name)
			prevEnd += float64(c.Requests)
		}
		Expect(s.Requests).To(Equal(uint64(900)))
		Expect(s.Outstanding).To(BeZero())
		Expect(s.Connected).To(Equal(4))
		Expect(b.srv.Stats().Commands).To(Equal(uint64(900)), "the server ran exactly what was asked")
		Expect(b.store.Stats()).NotTo(BeZero())
	})

	It("keeps up to clients x pipeline requests in flight, and pipelining raises the rate", func() {
		rate := func(pipeline int) (float64, uint64) {
			b := newBenchBed(1, nic.LinkConfig{}, redis.BenchConfig{Clients: 2, Requests: 1 << 30, Commands: []string{"SET"}, Pipeline: pipeline})
			most := b.runSampling(20*time.Millisecond, 100*time.Microsecond)
			return b.bench.Stats(b.eng.Now()).Commands["SET"].RPS, most
		}
		one, mostOne := rate(1)
		eight, mostEight := rate(8)
		Expect(mostOne).To(BeNumerically("<=", 2))
		Expect(mostEight).To(BeNumerically("<=", 16))
		Expect(mostEight).To(BeNumerically(">", 2), "pipelined")
		Expect(eight).To(BeNumerically(">", one*2))
	})

	It("describes the running test as it goes, and the others with zeros", func() {
		b := newBenchBed(1, nic.LinkConfig{}, redis.BenchConfig{Clients: 8, Requests: 1 << 30, Commands: []string{"SET", "GET"}})
		b.eng.RunUntil(20 * time.Millisecond)
		s := b.bench.Stats(b.eng.Now())
		set := s.Commands["SET"]
		Expect(set.Finished).To(BeFalse())
		Expect(set.Requests).To(BeNumerically(">", 100))
		Expect(set.RPS).To(BeNumerically(">", 1000))
		Expect(set.AvgMS).To(BeNumerically(">", 0))
		Expect(set.Outstanding).To(BeNumerically("<=", 8))
		Expect(s.Commands["GET"]).To(Equal(redis.CommandResult{}))
		Expect(s.Finished).To(BeFalse())
		Expect(b.srv.Stats().Commands - set.Requests).To(BeNumerically("<=", set.Outstanding))
	})

	It("has every configured command's figures before it runs", func() {
		b := newBenchBed(1, nic.LinkConfig{}, redis.BenchConfig{Commands: []string{"PING", "SET", "GET", "INCR"}})
		s := b.bench.Stats(0)
		Expect(s.Commands).To(HaveLen(4))
		for _, c := range s.Commands {
			Expect(c).To(Equal(redis.CommandResult{}))
		}
	})

	It("starts each client as soon as it is connected, while another's SYN is lost", func() {
		b := newBenchBed(11, nic.LinkConfig{Loss: 0.02}, redis.BenchConfig{Clients: 20, Requests: 1 << 30, Commands: []string{"SET"}})
		b.eng.RunUntil(300 * time.Millisecond)
		s := b.bench.Stats(b.eng.Now())
		Expect(s.Connected).To(BeNumerically("<", 20), "the seed loses a SYN: that client waits out the 1 s RTO")
		Expect(s.Commands["SET"].Requests).To(BeNumerically(">", 500))
	})

	It("after ResetStats runs its tests again, counting only the window", func() {
		b := newBenchBed(1, nic.LinkConfig{}, redis.BenchConfig{Clients: 10, Requests: 2000, Commands: []string{"SET", "GET"}, Pipeline: 3})
		b.eng.RunUntil(30 * time.Millisecond)
		Expect(b.bench.Stats(b.eng.Now()).Commands["SET"].Finished).To(BeTrue(), "SET ended in the warm-up")
		b.bench.ResetStats()
		b.srv.ResetStats()
		start := b.eng.Now()
		b.eng.RunUntil(start + 200*time.Millisecond)
		s := b.bench.Stats(b.eng.Now())
		Expect(s.Finished).To(BeTrue())
		for _, name := range []string{"SET", "GET"} {
			Expect(s.Commands[name].Requests).To(Equal(uint64(2000)), name)
		}
		served := b.srv.Stats().Commands
		// Replies to requests sent before the window count in the total
		// only; the server ran some of those before it too.
		Expect(s.Requests).To(BeNumerically(">=", 4000))
		Expect(s.Requests - 4000).To(BeNumerically("<=", 10*3))
		Expect(float64(served) - float64(s.Requests)).To(BeNumerically("<=", float64(s.Outstanding)))
		Expect(float64(s.Requests) - float64(served)).To(BeNumerically("<=", 10*3))
		begin, end, started, finished := b.bench.Active()
		Expect(started && finished).To(BeTrue())
		Expect(begin).To(BeNumerically(">=", start))
		Expect(end).To(BeNumerically(">", begin))
	})

	It("takes --threads up to redis-benchmark's MAX_THREADS and refuses more, naming the key", func() {
		Expect((&redis.BenchConfig{Threads: 1}).Validate()).To(Succeed())
		Expect((&redis.BenchConfig{Threads: 500}).Validate()).To(Succeed())
		Expect((&redis.BenchConfig{Threads: 501}).Validate()).To(MatchError(ContainSubstring("threads: 501")))
		Expect((&redis.BenchConfig{Threads: -1}).Validate()).To(MatchError(ContainSubstring("threads: -1")))
	})

	It("refuses a command listed twice, and leaves the caller's list alone", func() {
		cfg := redis.BenchConfig{Commands: []string{"set", "SET"}}
		Expect(cfg.Validate()).To(MatchError(ContainSubstring("commands[1]")))
		cfg = redis.BenchConfig{Commands: []string{"set", "get"}}
		b := newBed(1, nic.LinkConfig{})
		_, err := redis.NewBenchmark(cfg, b.client.in, b.remote, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Commands).To(Equal([]string{"set", "get"}))
	})
})

var _ = Describe("Benchmark's own work", func() {
	It("charges each request and reply on the client's core, as redis-benchmark spends it", func() {
		b := newBenchBed(1, nic.LinkConfig{}, redis.BenchConfig{Clients: 2, Requests: 100, Commands: []string{"PING"}})
		b.eng.RunUntil(100 * time.Millisecond)
		Expect(b.bench.Stats(b.eng.Now()).Finished).To(BeTrue())
		ops := b.client.core.Stats().Ops
		Expect(ops[redis.CostBenchRequest]).To(BeEquivalentTo(100))
		Expect(ops[redis.CostBenchReply]).To(BeEquivalentTo(100))
		Expect(ops[appcost.ParseByte]).To(BeEquivalentTo(100 * len("+PONG\r\n")))
		// Per request: five epoll_ctl (resetClient and writeHandler), a
		// write and at least one read, each a socket call.
		Expect(ops[lstack.CostSocketCall] + ops[epollCtlOp]).To(BeNumerically(">=", 7*100))
		// Every event the loop was handed is priced with its wait.
		Expect(ops[lstack.CostEpollEvent]).To(BeNumerically(">=", 100))
		Expect(ops[redis.CostCommand]).To(BeZero(), "the server's work is the server core's")
	})
})

// epollCtlOp is lstack's epoll_ctl op (lstack.CostEpollCtl, the op after
// epoll_event_user in its range) once it is named apart from the other
// socket calls; until then lstack charges an epoll_ctl as a socket call
// and this op counts nothing.
const epollCtlOp = hw.OpsLstack + 4

var _ = Describe("Benchmark's reads", func() {
	It("reads each reply with one read, as hiredis's redisBufferRead does, never one more that finds nothing", func() {
		// strace -c of redis-benchmark counts one recvfrom a request at 1,
		// 50 and 1,000 clients (docs/cost-model.md); reading until the
		// socket is empty made a second, returning EAGAIN, a system call
		// on a kernel host.
		calls := func(requests int) int64 {
			b := newBenchBed(1, nic.LinkConfig{}, redis.BenchConfig{Clients: 2, Requests: requests, Commands: []string{"PING"}})
			b.eng.RunUntil(100 * time.Millisecond)
			Expect(b.bench.Stats(b.eng.Now()).Finished).To(BeTrue())
			ops := b.client.core.Stats().Ops
			return ops[lstack.CostSocketCall] + ops[epollCtlOp]
		}
		// 100 more requests: five epoll_ctl, a write and a read each.
		Expect(calls(200) - calls(100)).To(BeEquivalentTo(7 * 100))
	})
})
