package lstack_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/tcp"
)

var _ = Describe("Neighbor Discovery shared between the instances of a port", func() {
	It("lets every instance resolve a peer with a cold cache, though RSS steers the peer's advertisements to one queue (RFC 4861 section 7.2)", func() {
		eng := sim.NewEngine(7)
		server, err := simhost.NewHost(eng, simhost.HostConfig{
			NIC:     simhost.NICConfig{Name: "server", ID: 1, Queues: 4},
			Address: "fd00::1/64", TCP: tcp.DefaultConfig(), CPU: 10,
		})
		Expect(err).NotTo(HaveOccurred())
		client := newNode(eng, 0, "client", "fd00::2/64", tcp.DefaultConfig(), 1500)
		_, err = nic.NewLink(eng, "wire", client.port, server.Port, nic.LinkConfig{Latency: 50 * time.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		// Past DAD on both sides (a random delay up to 1 s and one
		// RetransTimer, RFC 4862 section 5.4).
		eng.RunUntil(3 * time.Second)
		peer, err := ipv6.ParseAddr("fd00::2")
		Expect(err).NotTo(HaveOccurred())

		// Every instance pings the client: each must resolve it first.
		// The client's advertisements all carry the same addresses, so
		// the NIC's RSS puts them on one queue; the other instances
		// learn the client only from the copies that queue's instance
		// shares.
		for k, in := range server.Instances {
			Expect(in.Iface().SendEcho6(eng.Now(), peer, 1, uint16(k), []byte("hello"))).To(Succeed())
			server.Cores[k].Wake(eng.Now())
		}
		eng.RunUntil(eng.Now() + 100*time.Millisecond) // far below ND's 1 s retransmission
		// Each echo left only once its instance had resolved the client.
		Expect(client.in.Iface().Stats6().ICMPv6.InEchos).To(Equal(uint64(4)))
		shared := uint64(0)
		for k, in := range server.Instances {
			Expect(in.Iface().Stats6().NDP.Resolved).To(BeNumerically(">=", 1), fmt.Sprintf("instance %d", k))
			shared += in.Stats().ARPShared
		}
		Expect(shared).To(BeNumerically(">=", 3), "the advertisements reached the other instances as copies")
	})
})
