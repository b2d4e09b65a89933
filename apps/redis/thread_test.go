package redis_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/redis"
	"github.com/savanna-sim/savanna/apps/resp"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// threadBed is a server with two stack lcores (CPUs 2 and 3) and Redis's
// one thread on CPU 0, and a client host.
type threadBed struct {
	eng    *sim.Engine
	lcores []*sim.Core
	core   *sim.Core
	srv    *redis.ThreadServer
	client *host
}

func newThreadBed() *threadBed {
	eng := sim.NewEngine(5)
	h, err := simhost.NewHost(eng, simhost.HostConfig{
		NIC: simhost.NICConfig{Name: "server", ID: 0, Queues: 2,
			TxOffloads: hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum,
			RxOffloads: hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum,
			RxRing:     1024, TxRing: 1024, Mbufs: 8192},
		Address: "10.0.0.1/24", TCP: tcp.DefaultConfig(), CPU: 2,
	})
	Expect(err).NotTo(HaveOccurred())
	c := newHost(eng, 1, "client", "10.0.0.2/24")
	_, err = nic.NewLink(eng, "wire", h.Port, c.port, nic.LinkConfig{Latency: 10 * time.Microsecond})
	Expect(err).NotTo(HaveOccurred())
	core, err := h.NewCore(0, false)
	Expect(err).NotTo(HaveOccurred())
	router := lstack.NewRouter(32)
	ep := lstack.NewEpoll(h.Instances[0])
	for i, in := range h.Instances {
		b, err := lstack.NewBridge(in, router, h.Cores[i].Wake)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Listen(6379, 128, ep.Accepted)).To(Succeed())
		simhost.BindBridge(eng, h.Cores[i], b)
	}
	srv := redis.NewThreadServer(ep, resp.NewStore(), core.Wake)
	core.AttachAs("redis_server", srv)
	return &threadBed{eng: eng, lcores: h.Cores, core: core, srv: srv, client: c}
}

var _ = Describe("ThreadServer", func() {
	It("serves every connection from its one thread, SET and GET each charged its own procedure", func() {
		b := newThreadBed()
		remote := tcp.AddrFrom4([4]byte{10, 0, 0, 1}, 6379)
		var clients []*rawClient
		for i := 0; i < 8; i++ {
			clients = append(clients, newRawClient(b.client, remote,
				chunk{data: command("SET", "k", "bar")},
				chunk{after: time.Millisecond, data: command("GET", "k")}))
		}
		b.eng.RunUntil(20 * time.Millisecond)
		for _, c := range clients {
			Expect(string(c.got)).To(Equal("+OK\r\n$3\r\nbar\r\n"))
		}
		st := b.srv.Stats()
		Expect(st.Accepted).To(Equal(uint64(8)))
		Expect(st.Commands).To(Equal(uint64(16)))
		ops := b.core.Stats().Ops
		Expect(ops[redis.CostCmdSet]).To(Equal(int64(8)))
		Expect(ops[redis.CostCmdGet]).To(Equal(int64(8)))
		Expect(ops[redis.CostCommand]).To(Equal(int64(16)))
		// The stack lcores ran no command: only the thread's core did.
		for _, lc := range b.lcores {
			Expect(lc.Stats().Ops[redis.CostCommand]).To(BeZero())
		}
		// Every wait is one epoll_wait; each request's socket came back
		// once (no event for bytes still on their way).
		ep := b.srv.Epoll().Stats()
		Expect(ep.Events).To(Equal(uint64(16)))
		Expect(ep.Accepted).To(Equal(uint64(8)))
		Expect(ep.Sleeps).To(BeNumerically(">", 0), "an idle thread sleeps")
	})
})
