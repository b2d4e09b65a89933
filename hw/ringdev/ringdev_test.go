package ringdev_test

import (
	"encoding/binary"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/internal/rss"
)

// tcpFrame builds an Ethernet/IPv4/TCP header-only frame for a 4-tuple.
func tcpFrame(pool hw.Mempool, src, dst [4]byte, sport, dport uint16) *hw.Mbuf {
	m := pool.Get()
	Expect(m).NotTo(BeNil())
	b := make([]byte, 14+20+20)
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:]
	ip[0], ip[9] = 0x45, 6
	binary.BigEndian.PutUint16(ip[2:], 40)
	copy(ip[12:16], src[:])
	copy(ip[16:20], dst[:])
	binary.BigEndian.PutUint16(ip[20:], sport)
	binary.BigEndian.PutUint16(ip[22:], dport)
	Expect(m.SetData(b)).To(Succeed())
	return m
}

func setup(p *ringdev.Port, pool hw.Mempool, queues, ring int, rss bool) {
	conf := hw.PortConf{RxQueues: queues, TxQueues: queues}
	if rss {
		conf.RSSHashTypes = hw.RSSIPv4 | hw.RSSIPv4TCP
	}
	Expect(p.Configure(conf)).To(Succeed())
	for q := 0; q < queues; q++ {
		Expect(p.SetupRxQueue(q, ring, pool)).To(Succeed())
		Expect(p.SetupTxQueue(q, ring)).To(Succeed())
	}
	Expect(p.Start()).To(Succeed())
}

var _ = Describe("ring port pair", func() {
	var (
		a, b *ringdev.Port
		pool *ringdev.Mempool
	)
	BeforeEach(func() {
		var err error
		a, b, err = ringdev.NewPair(ringdev.Config{Name: "a"}, ringdev.Config{Name: "b"})
		Expect(err).NotTo(HaveOccurred())
		pool, err = ringdev.NewMempool("p", 4096, 2048)
		Expect(err).NotTo(HaveOccurred())
	})

	It("delivers what one port sends to the other, without copying", func() {
		setup(a, pool, 1, 64, false)
		setup(b, pool, 1, 64, false)
		m := tcpFrame(pool, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 1000, 80)
		Expect(a.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1))
		got := make([]*hw.Mbuf, 4)
		Expect(b.RxBurst(0, got)).To(Equal(1))
		Expect(got[0]).To(BeIdenticalTo(m))
		got[0].Free()
		Expect(a.Stats().OPackets).To(BeEquivalentTo(1))
		Expect(b.Stats().IPackets).To(BeEquivalentTo(1))
		Expect(b.Stats().IBytes).To(BeEquivalentTo(54))
		Expect(pool.Stats().InUse).To(Equal(0))
		Expect(a.Link().Up).To(BeTrue())
	})

	It("drops and counts imissed when the receive ring is full", func() {
		setup(a, pool, 1, 32, false)
		setup(b, pool, 1, 32, false)
		var ms []*hw.Mbuf
		for i := 0; i < 40; i++ {
			ms = append(ms, tcpFrame(pool, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 1000, 80))
		}
		Expect(a.TxBurst(0, ms)).To(Equal(40))
		Expect(b.Stats().IMissed).To(BeEquivalentTo(8))
		got := make([]*hw.Mbuf, 64)
		n := b.RxBurst(0, got)
		Expect(n).To(Equal(32))
		for _, m := range got[:n] {
			m.Free()
		}
		Expect(pool.Stats().InUse).To(Equal(0))
	})

	It("counts oversize frames and a stopped peer as oerrors", func() {
		setup(a, pool, 1, 32, false)
		setup(b, pool, 1, 32, false)
		big := pool.Get()
		_, err := big.Append(1600)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.TxBurst(0, []*hw.Mbuf{big})).To(Equal(1))
		Expect(b.Stop()).To(Succeed())
		Expect(a.TxBurst(0, []*hw.Mbuf{tcpFrame(pool, [4]byte{1}, [4]byte{2}, 1, 2)})).To(Equal(1))
		Expect(a.Stats().OErrors).To(BeEquivalentTo(2))
		Expect(a.Link().Up).To(BeFalse())
		Expect(pool.Stats().InUse).To(Equal(0))
	})

	It("spreads flows over queues with RSS and keeps each flow on one queue", func() {
		setup(a, pool, 1, 1024, false)
		setup(b, pool, 4, 1024, true)
		perQ := map[int]int{}
		got := make([]*hw.Mbuf, 32)
		for port := uint16(1000); port < 1200; port++ {
			for rep := 0; rep < 2; rep++ {
				Expect(a.TxBurst(0, []*hw.Mbuf{tcpFrame(pool, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, port, 80)})).To(Equal(1))
			}
			seen := -1
			for q := 0; q < 4; q++ {
				n := b.RxBurst(q, got)
				if n > 0 {
					Expect(n).To(Equal(2), "both packets of a flow on one queue")
					Expect(seen).To(Equal(-1))
					seen = q
					Expect(got[0].Flags & hw.RxRSSHash).NotTo(BeZero())
					for _, m := range got[:n] {
						m.Free()
					}
				}
			}
			perQ[seen]++
		}
		for q := 0; q < 4; q++ {
			Expect(perQ[q]).To(BeNumerically(">", 20), "queue %d got %d flows", q, perQ[q])
		}
	})

	It("rejects bad configurations with errors naming the problem", func() {
		Expect(a.Configure(hw.PortConf{RxQueues: 0, TxQueues: 1})).To(MatchError(ContainSubstring("rx and")))
		Expect(a.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, TxOffloads: hw.TxOffloadTCPChecksum})).To(MatchError(ContainSubstring("offloads")))
		Expect(a.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1})).To(Succeed())
		Expect(a.SetupRxQueue(0, 100, pool)).To(MatchError(ContainSubstring("power of two")))
		Expect(a.Start()).To(MatchError(ContainSubstring("not set up")))
		_, _, err := ringdev.NewPair(ringdev.Config{MTU: 10}, ringdev.Config{})
		Expect(err).To(MatchError(ContainSubstring("mtu: 10")))
	})
})

var _ = Describe("thread-safe mempool", func() {
	It("survives concurrent gets and puts without losing an mbuf", func() {
		pool, err := ringdev.NewMempool("p", 1000, 256)
		Expect(err).NotTo(HaveOccurred())
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var held []*hw.Mbuf
				for i := 0; i < 20000; i++ {
					if m := pool.Get(); m != nil {
						held = append(held, m)
					}
					if len(held) > 50 || i%3 == 0 {
						for _, m := range held {
							m.Free()
						}
						held = held[:0]
					}
				}
				for _, m := range held {
					m.Free()
				}
			}()
		}
		wg.Wait()
		st := pool.Stats()
		Expect(st.Available).To(Equal(1000))
		Expect(st.InUse).To(Equal(0))
		ms := make([]*hw.Mbuf, 1000)
		Expect(pool.GetBulk(ms)).To(BeTrue())
		Expect(pool.GetBulk(make([]*hw.Mbuf, 1))).To(BeFalse())
		Expect(pool.Stats().FailedGets).To(BeNumerically(">=", 1))
	})

	It("hands out the mbuf freed last first, so that hot mbufs are reused", func() {
		pool, err := ringdev.NewMempool("lifo", 64, 256)
		Expect(err).NotTo(HaveOccurred())
		a, b := pool.Get(), pool.Get()
		Expect(a).NotTo(BeIdenticalTo(b))
		a.Free()
		b.Free()
		Expect(pool.Get()).To(BeIdenticalTo(b))
		Expect(pool.Get()).To(BeIdenticalTo(a))
	})

	It("refuses and counts a double free instead of handing one mbuf out twice", func() {
		pool, err := ringdev.NewMempool("double", 4, 256)
		Expect(err).NotTo(HaveOccurred())
		m := pool.Get()
		m.Free()
		pool.Put(m)
		Expect(pool.Lost()).To(Equal(uint64(1)))
		Expect(pool.Stats().Available).To(Equal(4))
		got := map[*hw.Mbuf]bool{}
		for i := 0; i < 4; i++ {
			x := pool.Get()
			Expect(x).NotTo(BeNil())
			Expect(got[x]).To(BeFalse(), "mbuf handed out twice")
			got[x] = true
		}
		Expect(pool.Get()).To(BeNil())
	})

	DescribeTable("rejects bad sizes", func(n, room int, msg string) {
		_, err := ringdev.NewMempool("bad", n, room)
		Expect(err).To(MatchError(ContainSubstring(msg)))
	},
		Entry("no mbufs", 0, 2048, "mbufs"),
		Entry("room below headroom", 16, 64, "data room"),
	)
})

var _ = Describe("Toeplitz hash", func() {
	It("matches Microsoft's published verification vector", func() {
		// "Verifying the RSS Hash Calculation": 66.9.149.187:2794 ->
		// 161.142.100.80:1766 hashes to 0x51ccc178 (IPv4 with TCP ports).
		in := []byte{66, 9, 149, 187, 161, 142, 100, 80, 0x0a, 0xea, 0x06, 0xe6}
		Expect(rss.Toeplitz(ringdev.DefaultRSSKey(), in)).To(Equal(uint32(0x51ccc178)))
		Expect(rss.Toeplitz(ringdev.DefaultRSSKey(), in[:8])).To(Equal(uint32(0x323e8fc2)))
	})
})
