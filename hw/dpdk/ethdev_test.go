//go:build dpdk

package dpdk_test

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// frame builds an Ethernet frame from src to dst carrying seq.
func frame(dst, src []byte, seq uint32, size int) []byte {
	b := make([]byte, size)
	copy(b[0:6], dst)
	copy(b[6:12], src)
	binary.BigEndian.PutUint16(b[12:14], 0x88b5) // IEEE local experimental EtherType
	binary.BigEndian.PutUint32(b[14:18], seq)
	for i := 18; i < size; i++ {
		b[i] = byte(seq) + byte(i)
	}
	return b
}

// openPort configures one queue pair on the named port with an rx pool
// on the port's socket, and starts it.
func openPort(name, pool string) (*dpdk.EthDev, *dpdk.Mempool) {
	p, err := eal.OpenPort(name)
	Expect(err).NotTo(HaveOccurred())
	mp, err := eal.NewMempool(dpdk.MempoolConfig{Name: pool, Size: 1024, Cache: 0,
		DataRoom: 2048 + hw.DefaultHeadroom, Socket: p.Socket()})
	Expect(err).NotTo(HaveOccurred())
	Expect(mp.NUMANode()).To(Equal(p.Socket()))
	Expect(p.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1})).To(Succeed())
	Expect(p.SetupRxQueue(0, 256, mp)).To(Succeed())
	Expect(p.SetupTxQueue(0, 256)).To(Succeed())
	return p, mp
}

// send transmits n frames of size bytes from port from, retrying the
// burst until the port took them all.
func send(from *dpdk.EthDev, pool *dpdk.Mempool, dst []byte, first uint32, n, size int) {
	src := from.MACAddr()
	pkts := make([]*hw.Mbuf, n)
	for i := range pkts {
		pkts[i] = pool.Get()
		Expect(pkts[i]).NotTo(BeNil())
		Expect(pkts[i].SetData(frame(dst, src, first+uint32(i), size))).To(Succeed())
	}
	sent := 0
	Eventually(func() int {
		sent += from.TxBurst(0, pkts[sent:])
		return sent
	}).WithTimeout(5 * time.Second).WithPolling(time.Millisecond).Should(Equal(n))
}

// receive polls port to until n frames arrived and returns their bytes,
// freeing the mbufs.
func receive(to *dpdk.EthDev, n int) [][]byte {
	var got [][]byte
	burst := make([]*hw.Mbuf, 32)
	Eventually(func() int {
		k := to.RxBurst(0, burst)
		for _, m := range burst[:k] {
			got = append(got, m.Bytes(nil))
			m.Free()
		}
		return len(got)
	}).WithTimeout(5 * time.Second).WithPolling(time.Millisecond).Should(BeNumerically(">=", n))
	return got
}

var _ = Describe("EthDev", Label("dpdk"), Ordered, func() {
	Context("a net_memif pair", Ordered, func() {
		var (
			server, client *dpdk.EthDev
			spool, cpool   *dpdk.Mempool
		)

		BeforeAll(func() {
			// The server port must start before the client connects.
			server, spool = openPort("net_memif0", "memif0_rx")
			Expect(server.Start()).To(Succeed())
			client, cpool = openPort("net_memif1", "memif1_rx")
			Expect(client.Start()).To(Succeed())
			Eventually(func() bool { return server.Link().Up && client.Link().Up }).
				WithTimeout(10 * time.Second).WithPolling(10 * time.Millisecond).Should(BeTrue())
			// The client must poll rx once before the server can send.
			burst := make([]*hw.Mbuf, 8)
			Expect(client.RxBurst(0, burst)).To(BeZero())
			Expect(server.RxBurst(0, burst)).To(BeZero())
		})

		It("reports what the ports can do", func() {
			info := server.Info()
			Expect(info.DriverName).To(Equal("net_memif"))
			Expect(info.MaxRxQueues).To(BeNumerically(">=", 1))
			Expect(server.MACAddr()).To(HaveLen(6))
			Expect(server.Link().Up).To(BeTrue())
		})

		DescribeTable("moves frames both ways with stats counted",
			func(n, size int) {
				server.ResetStats()
				client.ResetStats()
				send(client, cpool, server.MACAddr(), 1000, n, size)
				got := receive(server, n)
				Expect(got).To(HaveLen(n))
				for i, b := range got {
					Expect(b).To(Equal(frame(server.MACAddr(), client.MACAddr(), 1000+uint32(i), size)))
				}
				send(server, spool, client.MACAddr(), 2000, n, size)
				back := receive(client, n)
				Expect(back).To(HaveLen(n))
				for i, b := range back {
					Expect(b).To(Equal(frame(client.MACAddr(), server.MACAddr(), 2000+uint32(i), size)))
				}
				for _, p := range []*dpdk.EthDev{server, client} {
					st := p.Stats()
					Expect(st.OPackets).To(BeEquivalentTo(n), p.Name())
					Expect(st.IPackets).To(BeEquivalentTo(n), p.Name())
					Expect(st.OBytes).To(BeEquivalentTo(n*size), p.Name())
					Expect(st.IBytes).To(BeEquivalentTo(n*size), p.Name())
					Expect(st.QIPackets[0]).To(BeEquivalentTo(n), p.Name())
					Expect(st.OErrors+st.IErrors+st.IMissed+st.RxNoMbuf).To(BeZero(), p.Name())
				}
				// Every mbuf went back: sent ones freed by the PMD, received
				// ones by Free.
				Eventually(func() int { return spool.Stats().InUse + cpool.Stats().InUse }).
					WithTimeout(5*time.Second).Should(BeNumerically("<=", 2*256+64), "rx rings hold their descriptors' mbufs")
			},
			Entry("one minimum frame", 1, 60),
			Entry("a burst of 32 full frames", 32, 1514),
			Entry("500 frames in bursts", 500, 200),
		)

		It("echoes frames between two registered lcore goroutines", func() {
			const n = 2000
			server.ResetStats()
			client.ResetStats()
			stop := make(chan struct{})
			echoed := make(chan int)
			// The server's lcore: a goroutine locked to its thread and
			// registered with the EAL, echoing every frame it receives.
			go func() {
				defer GinkgoRecover()
				_, err := eal.RegisterThread()
				Expect(err).NotTo(HaveOccurred())
				defer eal.UnregisterThread()
				burst := make([]*hw.Mbuf, 32)
				total := 0
				for {
					select {
					case <-stop:
						echoed <- total
						return
					default:
					}
					k := server.RxBurst(0, burst)
					for sent := 0; sent < k; {
						sent += server.TxBurst(0, burst[sent:k])
					}
					total += k
				}
			}()
			// The client's lcore sends n frames and counts the echoes.
			got := make(chan int)
			go func() {
				defer GinkgoRecover()
				lc, err := eal.RegisterThread()
				Expect(err).NotTo(HaveOccurred())
				Expect(eal.LcoreID()).To(Equal(lc))
				defer eal.UnregisterThread()
				src, dst := client.MACAddr(), server.MACAddr()
				tx := make([]*hw.Mbuf, 32)
				rx := make([]*hw.Mbuf, 32)
				sent, back := 0, 0
				for back < n {
					if sent < n {
						k := min(len(tx), n-sent)
						if cpool.GetBulk(tx[:k]) {
							for i, m := range tx[:k] {
								Expect(m.SetData(frame(dst, src, uint32(sent+i), 64))).To(Succeed())
							}
							took := client.TxBurst(0, tx[:k])
							for _, m := range tx[took:k] {
								m.Free()
							}
							sent += took
						}
					}
					k := client.RxBurst(0, rx)
					for _, m := range rx[:k] {
						m.Free()
					}
					back += k
				}
				got <- back
			}()
			Eventually(got).WithTimeout(30 * time.Second).Should(Receive(Equal(n)))
			close(stop)
			Expect(<-echoed).To(Equal(n))
			Expect(client.Stats().OPackets).To(BeEquivalentTo(n))
			Expect(client.Stats().IPackets).To(BeEquivalentTo(n))
			Expect(server.Stats().IPackets).To(BeEquivalentTo(n))
		})

		It("carries 64 MiB of TCP between two Savanna stacks, intact: the stack code of the simulation on DPDK ports", func() {
			pool := func(name string, socket int) *dpdk.Mempool {
				mp, err := eal.NewMempool(dpdk.MempoolConfig{Name: name, Size: 8192, Cache: 0,
					DataRoom: 2048 + hw.DefaultHeadroom, Socket: socket})
				Expect(err).NotTo(HaveOccurred())
				return mp
			}
			cfg := tcp.DefaultConfig()
			cfg.SendBuffer, cfg.RecvBuffer = 512<<10, 512<<10
			stack := func(dev *dpdk.EthDev, addr string, mp *dpdk.Mempool, seed uint64) *lstack.Instance {
				in, err := lstack.New(lstack.Config{Iface: iface.Config{Address: addr}, TCP: cfg}, dev, 0, mp, rand.New(rand.NewPCG(seed, 1)))
				Expect(err).NotTo(HaveOccurred())
				in.Start(0)
				return in
			}
			a := stack(client, "10.9.0.2/24", pool("tcp_client", client.Socket()), 1)
			b := stack(server, "10.9.0.1/24", pool("tcp_server", server.Socket()), 2)
			ln, err := b.TCP().Listen(tcp.IPFrom4([4]byte{10, 9, 0, 1}), 5001, 4)
			Expect(err).NotTo(HaveOccurred())
			conn, err := a.TCP().Connect(0, tcp.AddrFrom4([4]byte{10, 9, 0, 2}, 0), tcp.AddrFrom4([4]byte{10, 9, 0, 1}, 5001))
			Expect(err).NotTo(HaveOccurred())

			const total = 64 << 20
			pattern := func(b []byte, off int) {
				for i := range b {
					x := off + i
					b[i] = byte(x*7 + x>>9)
				}
			}
			var (
				meter      hw.CountingMeter
				srv        *tcp.Conn
				sent, got  int
				closed     bool
				wbuf, rbuf = make([]byte, 64<<10), make([]byte, 64<<10)
				sums, sumr = sha256.New(), sha256.New()
				start      = time.Now()
				deadline   = start.Add(2 * time.Minute)
			)
			// One thread polls both stacks, as one lcore serving two ports.
			for got < total && time.Now().Before(deadline) {
				meter.Clock = time.Since(start)
				a.Poll(&meter)
				b.Poll(&meter)
				if conn.Connected() && sent < total {
					k := min(len(wbuf), total-sent)
					pattern(wbuf[:k], sent)
					n, err := conn.Write(wbuf[:k])
					if err != nil && !errors.Is(err, tcp.ErrWouldBlock) {
						Fail(err.Error())
					}
					sums.Write(wbuf[:n])
					sent += n
				}
				if sent == total && !closed {
					Expect(conn.CloseWrite()).To(Succeed())
					closed = true
				}
				if srv == nil {
					srv, _ = ln.Accept()
				}
				for srv != nil {
					n, err := srv.Read(rbuf)
					sumr.Write(rbuf[:n])
					got += n
					if err != nil || n == 0 {
						break
					}
				}
			}
			elapsed := time.Since(start)
			GinkgoWriter.Printf("64 MiB over net_memif in %v (%.0f MB/s); client tcp %+v\n", elapsed,
				float64(got)/elapsed.Seconds()/1e6, a.TCP().Stats())
			Expect(got).To(Equal(total))
			Expect(sumr.Sum(nil)).To(Equal(sums.Sum(nil)))
		})

		It("reports extended statistics by name, its own last", func() {
			xs := server.XStats()
			names := make([]string, len(xs))
			for i, x := range xs {
				names[i] = x.Name
			}
			Expect(names).To(ContainElements("rx_good_packets", "tx_good_packets", "savanna_rx_foreign", "savanna_tx_bursts"))
		})

		It("takes and drops an mbuf that is not backed by DPDK, counting it", func() {
			before := client.DriverStats().TxForeign
			foreign := &hw.Mbuf{Buf: make([]byte, 256), RefCnt: 1}
			Expect(client.TxBurst(0, []*hw.Mbuf{foreign})).To(Equal(1))
			Expect(client.DriverStats().TxForeign).To(Equal(before + 1))
		})

		It("refuses a pool that is not a hw/dpdk pool", func() {
			err := server.SetupRxQueue(0, 256, fakePool{})
			Expect(err).To(MatchError(ContainSubstring("not a hw/dpdk mempool")))
		})
	})

	Context("a net_ring loopback port", Ordered, func() {
		var (
			port *dpdk.EthDev
			pool *dpdk.Mempool
		)

		BeforeAll(func() {
			port, pool = openPort("net_ring0", "ring0_rx")
			Expect(port.Start()).To(Succeed())
		})

		It("passes mbufs through without a copy and returns them all", func() {
			base := pool.Stats().InUse
			send(port, pool, port.MACAddr(), 1, 64, 128)
			got := make([]*hw.Mbuf, 64)
			n := port.RxBurst(0, got)
			Expect(n).To(Equal(64))
			for i, m := range got[:n] {
				Expect(m.Bytes(nil)).To(Equal(frame(port.MACAddr(), port.MACAddr(), 1+uint32(i), 128)))
				Expect(m.RefCnt).To(BeEquivalentTo(1))
				m.Free()
			}
			Expect(pool.Stats().InUse).To(Equal(base))
			Expect(port.Stats().OPackets).To(BeEquivalentTo(64))
		})

		It("keeps a segment the caller still holds alive through tx and rx", func() {
			base := pool.Stats().InUse
			m := pool.Get()
			Expect(m.SetData(frame(port.MACAddr(), port.MACAddr(), 7, 100))).To(Succeed())
			m.RefInc() // held twice: say, a retransmission queue and the tx ring
			Expect(port.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1))
			Expect(m.RefCnt).To(BeEquivalentTo(1))
			got := make([]*hw.Mbuf, 4)
			Expect(port.RxBurst(0, got)).To(Equal(1))
			Expect(got[0]).To(BeIdenticalTo(m), "the same rte_mbuf comes back, so the same twin")
			Expect(m.RefCnt).To(BeEquivalentTo(2))
			got[0].Free()
			Expect(pool.Stats().InUse).To(Equal(base + 1))
			m.Free()
			Expect(pool.Stats().InUse).To(Equal(base))
		})

		It("sends chained mbufs", func() {
			base := pool.Stats().InUse
			a, b := pool.Get(), pool.Get()
			Expect(a.SetData(frame(port.MACAddr(), port.MACAddr(), 9, 60))).To(Succeed())
			Expect(b.SetData([]byte("tail of the chain"))).To(Succeed())
			a.Next, a.NbSegs, a.PktLen = b, 2, 60+17
			want := a.Bytes(nil)
			Expect(port.TxBurst(0, []*hw.Mbuf{a})).To(Equal(1))
			got := make([]*hw.Mbuf, 4)
			Expect(port.RxBurst(0, got)).To(Equal(1))
			Expect(got[0].NbSegs).To(Equal(2))
			Expect(got[0].PktLen).To(Equal(77))
			Expect(got[0].Bytes(nil)).To(Equal(want))
			got[0].Free()
			Expect(pool.Stats().InUse).To(Equal(base))
		})

		It("describes chains longer than its scratch array", func() {
			// 400 packets of 3 segments are 1200 segments, more than the
			// 1024 one burst describes in its scratch array.
			txPool, err := eal.NewMempool(dpdk.MempoolConfig{Name: "ring0_tx3", Size: 1400,
				DataRoom: 256 + hw.DefaultHeadroom, Socket: port.Socket()})
			Expect(err).NotTo(HaveOccurred())
			const n = 400
			pkts := make([]*hw.Mbuf, n)
			for i := range pkts {
				segs := [3]*hw.Mbuf{txPool.Get(), txPool.Get(), txPool.Get()}
				Expect(segs[0].SetData(frame(port.MACAddr(), port.MACAddr(), uint32(i), 60))).To(Succeed())
				Expect(segs[1].SetData([]byte("middle"))).To(Succeed())
				Expect(segs[2].SetData([]byte(fmt.Sprintf("end %d", i)))).To(Succeed())
				segs[0].Next, segs[1].Next = segs[1], segs[2]
				pkts[i] = segs[0]
			}
			sent := 0
			for sent < n {
				k := port.TxBurst(0, pkts[sent:])
				Expect(k).To(BeNumerically(">", 0))
				sent += k
			}
			got := make([]*hw.Mbuf, n)
			Expect(port.RxBurst(0, got)).To(Equal(n))
			for i, m := range got {
				Expect(m.NbSegs).To(Equal(3))
				want := append(frame(port.MACAddr(), port.MACAddr(), uint32(i), 60), []byte(fmt.Sprintf("middleend %d", i))...)
				Expect(m.Bytes(nil)).To(Equal(want))
				m.Free()
			}
			Expect(txPool.Stats().InUse).To(BeZero())
		})

		It("has no RSS to configure on a software port", func() {
			Expect(port.Info().RETASize).To(BeZero())
			Expect(port.RETA()).To(BeNil())
			Expect(port.SetRETA(make([]uint16, 4))).To(MatchError(ContainSubstring("no RSS redirection table")))
		})
	})
})

// fakePool is an hw.Mempool that is not DPDK's.
type fakePool struct{ hw.Mempool }
