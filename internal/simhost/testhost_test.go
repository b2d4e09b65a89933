package simhost_test

import (
	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/internal/costops"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
)

// layers returns the names of the layers that charged a core.
func layers(c *sim.Core) []string {
	var names []string
	for _, l := range c.Stats().Layers {
		for _, op := range l.Ops {
			if op.Count > 0 {
				names = append(names, l.Layer)
				break
			}
		}
	}
	return names
}

var _ = Describe("NewNIC", func() {
	It("starts a port with the rig's defaults, on the default machine", func() {
		n, err := simhost.NewNIC(sim.NewEngine(1), simhost.NICConfig{Name: "eth0"})
		Expect(err).NotTo(HaveOccurred())
		Expect(n.Port.Preset().Name).To(Equal(simhost.DefaultModel))
		Expect(n.Memory.Topology().Name).To(Equal(simhost.DefaultMachine))
		Expect(n.Pools).To(HaveLen(1))
		// 2 x the preset's 1024-entry rx ring + 1024.
		Expect(n.Pools[0].Stats().Size).To(Equal(2*1024 + 1024))
		Expect(n.Pools[0].DataRoom()).To(Equal(nic.DefaultMbufSize))
		Expect(n.Pools[0].Name()).To(Equal("eth0-rx0"))
		Expect(*n.Prices).To(Equal(*cost.For(costops.Table()).Default().Prices(2.6)), "the Xeon E5-2650 v2 runs at 2.6 GHz")
		// Started: a burst on a queue is served (and finds nothing).
		Expect(n.Port.RxBurst(0, make([]*hw.Mbuf, 4))).To(BeZero())
		Expect(n.Port.Start()).To(Succeed())
	})

	It("gives every queue a pool of its own, of the size asked for", func() {
		n, err := simhost.NewNIC(sim.NewEngine(1), simhost.NICConfig{Name: "eth0", Queues: 3, Mbufs: 100, MbufSize: 4096})
		Expect(err).NotTo(HaveOccurred())
		Expect(n.Pools).To(HaveLen(3))
		for q, p := range n.Pools {
			Expect(p.Stats().Size).To(Equal(100), "queue %d", q)
			Expect(p.DataRoom()).To(Equal(4096), "queue %d", q)
		}
		Expect(n.Pools[2].Name()).To(Equal("eth0-rx2"))
	})

	DescribeTable("fails, naming the port, on a configuration the models refuse",
		func(cfg simhost.NICConfig, says string) {
			cfg.Name = "eth9"
			_, err := simhost.NewNIC(sim.NewEngine(1), cfg)
			Expect(err).To(MatchError(And(ContainSubstring("eth9"), ContainSubstring(says))))
		},
		Entry("an unknown machine", simhost.NICConfig{Machine: "pdp-11"}, "pdp-11"),
		Entry("an unknown NIC", simhost.NICConfig{Model: "ne2000"}, "ne2000"),
		Entry("a ring the NIC cannot have", simhost.NICConfig{RxRing: 100}, "ring"),
		Entry("pools the hugepages cannot hold", simhost.NICConfig{Mbufs: 1 << 20}, "mempool"),
	)

	It("makes cores of its machine, on their CPUs' nodes, priced as the machine", func() {
		n, err := simhost.NewNIC(sim.NewEngine(1), simhost.NICConfig{Name: "eth0"})
		Expect(err).NotTo(HaveOccurred())
		c, err := n.NewCore(8, true) // the second socket's first core
		Expect(err).NotTo(HaveOccurred())
		Expect(c.ID).To(Equal(8))
		Expect(c.Node).To(Equal(1))
		Expect(c.Stats().Spinning).To(BeTrue())
		_, err = n.NewCore(32, false)
		Expect(err).To(MatchError(ContainSubstring("CPU 32")))
	})
})

// pollFunc is a poller made of a function.
type pollFunc func(hw.Meter) (bool, time.Duration)

func (f pollFunc) Poll(m hw.Meter) (bool, time.Duration) { return f(m) }

var _ = Describe("BindApp", func() {
	It("charges the app's work to its layer and its burst calls to the layer's driver", func() {
		eng := sim.NewEngine(1)
		n, err := simhost.NewNIC(eng, simhost.NICConfig{Name: "eth0"})
		Expect(err).NotTo(HaveOccurred())
		c, err := n.NewCore(0, false)
		Expect(err).NotTo(HaveOccurred())
		app := pollFunc(func(m hw.Meter) (bool, time.Duration) {
			m.Charge(appcost.Nanos, 10)
			n.Port.RxBurst(0, make([]*hw.Mbuf, 1))
			return false, sim.Never
		})
		Expect(simhost.BindApp(c, n.Port, 0, "gen", app)).To(Succeed())
		eng.RunUntil(time.Microsecond)
		byLayer := map[string][hw.NumCostOps]sim.OpStat{}
		for _, l := range c.Stats().Layers {
			byLayer[l.Layer] = l.Ops
		}
		Expect(byLayer["gen"][appcost.Nanos].Count).To(BeEquivalentTo(10))
		Expect(byLayer["gen"][hw.CostNICRxBurst].Count).To(BeZero())
		Expect(byLayer["gen;driver"][hw.CostNICRxBurst].Count).To(BeEquivalentTo(1))
		Expect(simhost.BindApp(c, n.Port, 5, "gen", app)).To(HaveOccurred(), "the port has one queue")
	})
})

var _ = Describe("NewHost", func() {
	// pair is a user-space client pinging a server of mode over 10 us.
	pair := func(mode lstack.Mode) (client, server *simhost.Host) {
		eng := sim.NewEngine(1)
		var err error
		client, err = simhost.NewHost(eng, simhost.HostConfig{NIC: simhost.NICConfig{Name: "client"}, Address: "10.0.0.2/24"})
		Expect(err).NotTo(HaveOccurred())
		server, err = simhost.NewHost(eng, simhost.HostConfig{NIC: simhost.NICConfig{Name: "server", ID: 1}, Address: "10.0.0.1/24", Mode: mode, CPU: 1})
		Expect(err).NotTo(HaveOccurred())
		_, err = nic.NewLink(eng, "wire", client.Port, server.Port, nic.LinkConfig{Latency: 10 * time.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		Expect(client.Instance.Iface().SendEcho(0, [4]byte{10, 0, 0, 1}, 1, 1, []byte("hi"))).To(Succeed())
		client.Core.Wake(0)
		eng.RunUntil(time.Millisecond)
		Expect(client.Instance.Iface().Stats().ICMP.InEchoReps).To(BeEquivalentTo(1))
		return client, server
	}

	It("binds a user-space instance to a spinning core, its driver and stack work in their layers", func() {
		_, server := pair(lstack.ModeLstack)
		Expect(server.Core.Stats().Spinning).To(BeTrue())
		Expect(layers(server.Core)).To(ContainElements(simhost.LayerDriver, simhost.LayerStack))
		Expect(layers(server.Core)).NotTo(ContainElement(simhost.LayerKernel))
	})

	It("prices a kernel-mode instance and its NIC queue by the kernel's path, on a core that sleeps", func() {
		_, server := pair(lstack.ModeKernel)
		Expect(server.Core.Stats().Spinning).To(BeFalse())
		Expect(layers(server.Core)).To(ConsistOf(simhost.LayerKernel))
		Expect(server.Core.Stats().Ops[hw.CostNICRxBurst]).To(BeZero(), "the kernel's path takes an interrupt, not a PMD burst")
	})

	It("puts an instance on each queue, on consecutive CPUs (arpshare_test in stack/lstack shows them peers)", func() {
		h, err := simhost.NewHost(sim.NewEngine(1), simhost.HostConfig{
			NIC: simhost.NICConfig{Name: "server", Queues: 3}, Address: "10.0.0.1/24", CPU: 4, Sleep: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(h.Instances).To(HaveLen(3))
		Expect(h.Cores).To(HaveLen(3))
		Expect(h.Core).To(BeIdenticalTo(h.Cores[0]))
		Expect(h.Instance).To(BeIdenticalTo(h.Instances[0]))
		for q, c := range h.Cores {
			Expect(c.ID).To(Equal(4 + q))
			Expect(c.Stats().Spinning).To(BeFalse(), "Sleep")
		}
	})

	It("fails on an address the stack refuses", func() {
		_, err := simhost.NewHost(sim.NewEngine(1), simhost.HostConfig{NIC: simhost.NICConfig{Name: "server"}, Address: "10.0.0.300/24"})
		Expect(err).To(MatchError(ContainSubstring("server")))
	})
})
