package lstack_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/tcp"
)

var _ = Describe("ARP frames shared between the instances of a port", func() {
	It("release a peer's waiting packets on the peer's next turn, which the sharing wakes", func() {
		eng := sim.NewEngine(3)
		// Two instances on one port, on cores that sleep when idle (as
		// kernel-mode cores do), so that only the sharing can wake one.
		server, err := simhost.NewHost(eng, simhost.HostConfig{
			NIC:     simhost.NICConfig{Name: "server", ID: 1, Queues: 2},
			Address: "10.0.0.1/24", TCP: tcp.DefaultConfig(), CPU: 10, Sleep: true,
		})
		Expect(err).NotTo(HaveOccurred())
		port, instances, cores := server.Port, server.Instances, server.Cores
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

	It("count a copy the peer's pool refused as the peer's no_mbuf, and hand nothing back to the sharer", func() {
		eng := sim.NewEngine(5)
		server, err := simhost.NewHost(eng, simhost.HostConfig{
			NIC:     simhost.NICConfig{Name: "server", ID: 1, Queues: 2},
			Address: "10.0.0.1/24", TCP: tcp.DefaultConfig(), CPU: 10, Sleep: true,
		})
		Expect(err).NotTo(HaveOccurred())
		instances := server.Instances
		client := newNode(eng, 0, "client", "10.0.0.2/24", tcp.DefaultConfig(), 1500)
		_, err = nic.NewLink(eng, "wire", client.port, server.Port, nic.LinkConfig{Latency: 200 * time.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		eng.RunUntil(time.Millisecond) // past the gratuitous ARPs
		for _, in := range instances {
			in.ResetStats()
		}

		// Queue 1's pool runs dry (its rx ring keeps what it holds).
		var held []*hw.Mbuf
		for m := server.Pools[1].Get(); m != nil; m = server.Pools[1].Get() {
			held = append(held, m)
		}
		// The client's ARP request for the server is not IP: queue 0
		// gets it, and its copy for instance 1 finds no mbuf.
		Expect(client.in.Iface().SendEcho(eng.Now(), [4]byte{10, 0, 0, 1}, 1, 1, []byte("hello"))).To(Succeed())
		client.core.Wake(eng.Now())
		eng.RunUntil(eng.Now() + 2*time.Millisecond)
		Expect(instances[0].Iface().Stats().ARP.RxRequests).To(Equal(uint64(1)), "the sharer handles its frame once")
		Expect(instances[0].Stats().ARPShared).To(BeZero())
		Expect(instances[0].Stats().NoMbuf).To(BeZero())
		Expect(instances[1].Stats().NoMbuf).To(Equal(uint64(1)))
		Expect(instances[1].ARPCopyDrops()).To(Equal(uint64(1)))
		Expect(instances[1].Iface().Stats().ARP.RxRequests).To(BeZero())
		Expect(client.in.Iface().Stats().ARP.RxReplies).To(Equal(uint64(1)), "the sharer still answers")

		instances[1].ResetStats()
		Expect(instances[1].Stats().NoMbuf).To(BeZero())
		for _, m := range held {
			m.Free()
		}
	})
})
