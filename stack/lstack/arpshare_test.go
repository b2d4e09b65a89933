package lstack_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/sim/numa"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

var _ = Describe("ARP frames shared between the instances of a port", func() {
	It("release a peer's waiting packets on the peer's next turn, which the sharing wakes", func() {
		eng := sim.NewEngine(3)
		topo, err := numa.Preset("xeon-e5-2650v2-2p")
		Expect(err).NotTo(HaveOccurred())
		mem, err := numa.NewMemory(topo, &numa.HugepageConfig{Pages2M: []int64{256}})
		Expect(err).NotTo(HaveOccurred())
		port, err := nic.NewPort(eng, 1, nic.PortConfig{Name: "server", Model: "hi1822-25g"})
		Expect(err).NotTo(HaveOccurred())
		pools, err := nic.Setup(port, nic.PortConfig{Name: "server", Model: "hi1822-25g"}, mem, 2, 2)
		Expect(err).NotTo(HaveOccurred())
		prices := cost.Default().Prices(2.6)
		var instances []*lstack.Instance
		var cores []*sim.Core
		for q := range 2 {
			core := sim.NewCore(eng, 10+q, 0, prices, false) // sleeps when idle, as a kernel-mode core
			Expect(port.BindQueue(q, core)).To(Succeed())
			in, err := lstack.New(lstack.Config{Iface: iface.Config{Address: "10.0.0.1/24"}}, port, q, pools[q], eng.RNG("tcp"))
			Expect(err).NotTo(HaveOccurred())
			in.Start(eng.Now())
			in.SetWake(core.Wake)
			core.Attach(in)
			instances = append(instances, in)
			cores = append(cores, core)
		}
		for _, in := range instances {
			in.SetPeers(instances)
		}
		client := newNode(eng, 0, "client", "10.0.0.2/24", tcp.DefaultConfig(), 1500)
		_, err = nic.NewLink(eng, "wire", client.port, port, nic.LinkConfig{Latency: 200 * time.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		eng.RunUntil(100 * time.Microsecond)

		// Instance 1 pings the client: the echo waits for ARP. The reply
		// is not IP, so the NIC steers it to queue 0, whose instance
		// shares it with instance 1.
		Expect(instances[1].Iface().SendEcho(eng.Now(), [4]byte{10, 0, 0, 2}, 1, 1, []byte("hello"))).To(Succeed())
		Expect(instances[1].Iface().ARP().Pending()).To(Equal(1))
		cores[1].Wake(eng.Now())                     // the turn that sends the ARP request
		eng.RunUntil(eng.Now() + 2*time.Millisecond) // far below ARP's 1 s retransmission
		Expect(instances[0].Stats().ARPShared).To(BeNumerically(">=", 1))
		Expect(instances[1].Iface().ARP().Pending()).To(Equal(0))
		Expect(client.in.Iface().Stats().ICMP.InEchos).To(Equal(uint64(1)))
		Expect(port.Counters().OErrors).To(BeZero())
	})
})
