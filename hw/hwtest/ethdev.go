package hwtest

import (
	"encoding/binary"
	"fmt"
	"net"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
)

// EthPair is two ports wired to each other (a simulated link, a ring
// pair, a net_memif pair), each configured with one queue pair of
// RingSize descriptors and started by the factory.
type EthPair struct {
	// A and B are the ports; what one transmits the other receives.
	A, B hw.EthDev
	// PoolA and PoolB are the pools of A's and B's rx queues; the specs
	// take the frames they transmit from the sender's pool too.
	PoolA, PoolB hw.Mempool
	// NewPool makes a fresh pool of n mbufs (the name is unique per
	// call) for the pool accounting specs.
	NewPool func(name string, n int) hw.Mempool
	// Advance lets time pass so that frames in flight arrive and the
	// mbufs of frames that left are reclaimed: a simulation runs its
	// engine (and rte_eth_tx_done_cleanup); a real device yields.
	Advance func()
	// Caps says what the pair can do where backends differ.
	Caps EthCaps
}

// EthCaps are the behaviours in which backends of hw.EthDev genuinely
// differ; each spec that depends on one says which.
type EthCaps struct {
	// ZeroCopy: the receiver gets the very mbuf the sender transmitted
	// (DPDK's net_ring, hw/ringdev) rather than a copy in an mbuf of its
	// own rx pool (a NIC's DMA, net_memif, the simulated NIC).
	ZeroCopy bool
	// Chains: the pair transmits multi-segment mbufs (it was configured
	// with hw.TxOffloadMultiSegs where the device needs that).
	Chains bool
}

// maxPolls bounds the polls of one wait; with Advance between them a
// simulation needs one or two, a real device a few milliseconds' worth.
const maxPolls = 20000

// EthDevSpecs declares the hw.EthDev and hw.Mempool conformance specs
// against the pair factory makes; factory runs once, before the first
// spec, and the specs share the pair, leaving it as they found it.
func EthDevSpecs(factory func() *EthPair) {
	Describe("hw.EthDev conformance", Ordered, func() {
		var p *EthPair
		BeforeAll(func() {
			p = factory()
			Expect(p.A).NotTo(BeNil())
			Expect(p.B).NotTo(BeNil())
			waitUntil(p, func() bool { return p.A.Link().Up && p.B.Link().Up }, "link up on both ports")
		})

		It("describes itself: driver, queues, a unicast MAC of its own, link up", func() {
			for _, d := range []hw.EthDev{p.A, p.B} {
				info := d.Info()
				Expect(info.DriverName).NotTo(BeEmpty())
				Expect(info.MaxRxQueues).To(BeNumerically(">=", 1))
				Expect(info.MaxTxQueues).To(BeNumerically(">=", 1))
				mac := d.MACAddr()
				Expect(mac).To(HaveLen(6))
				Expect(mac[0]&1).To(BeZero(), "a port's MAC is unicast: %v", mac)
				Expect(d.Link().Up).To(BeTrue())
			}
			Expect(p.A.MACAddr()).NotTo(Equal(p.B.MACAddr()))
		})

		DescribeTable("carries frames both ways, intact and in order, and counts them",
			func(n, size int) {
				for _, dir := range []struct {
					from, to         hw.EthDev
					fromPool, toPool hw.Mempool
				}{{p.A, p.B, p.PoolA, p.PoolB}, {p.B, p.A, p.PoolB, p.PoolA}} {
					p.A.ResetStats()
					p.B.ResetStats()
					want := frames(dir.to.MACAddr(), dir.from.MACAddr(), n, size)
					got := transfer(p, dir.from, dir.fromPool, dir.to, want)
					Expect(got).To(HaveLen(n))
					for i := range got {
						Expect(got[i]).To(Equal(want[i]), "frame %d of %d", i, n)
					}
					settle(p)
					tx, rx := dir.from.Stats(), dir.to.Stats()
					Expect(tx.OPackets).To(BeEquivalentTo(n), "sender opackets")
					Expect(tx.OBytes).To(BeEquivalentTo(n*size), "sender obytes (frames without FCS)")
					Expect(rx.IPackets).To(BeEquivalentTo(n), "receiver ipackets")
					Expect(rx.IBytes).To(BeEquivalentTo(n*size), "receiver ibytes (frames without FCS)")
					if len(rx.QIPackets) > 0 {
						Expect(rx.QIPackets[0]).To(BeEquivalentTo(n), "receiver q0 ipackets")
					}
					if len(tx.QOPackets) > 0 {
						Expect(tx.QOPackets[0]).To(BeEquivalentTo(n), "sender q0 opackets")
					}
					Expect(rx.IMissed+rx.IErrors+rx.RxNoMbuf+tx.OErrors).To(BeZero(), "no drops: %+v %+v", tx, rx)
				}
			},
			Entry("one minimum frame", 1, 60),
			Entry("a burst of 32 full frames", 32, 1514),
			Entry("300 frames of 200 bytes", 300, 200),
			Entry("1000 small frames, more than one ring's worth of bursts", 1000, 64),
		)

		It("hands out no more frames per rx burst than asked", func() {
			const n = 40
			want := frames(p.B.MACAddr(), p.A.MACAddr(), n, 100)
			sendAll(p, p.A, p.PoolA, want)
			burst := make([]*hw.Mbuf, 8)
			var got [][]byte
			for i := 0; i < maxPolls && len(got) < n; i++ {
				k := p.B.RxBurst(0, burst)
				Expect(k).To(BeNumerically("<=", len(burst)))
				for _, m := range burst[:k] {
					got = append(got, m.Bytes(nil))
					m.Free()
				}
				if k == 0 {
					p.Advance()
				}
			}
			Expect(got).To(Equal(want))
		})

		It("hands out reset mbufs from its pools", func() {
			pool := p.NewPool("hwtest_reset", 16)
			m := pool.Get()
			Expect(m).NotTo(BeNil())
			Expect(m.RefCnt).To(BeEquivalentTo(1))
			Expect(m.DataLen).To(BeZero())
			Expect(m.PktLen).To(BeZero())
			Expect(m.NbSegs).To(Equal(1))
			Expect(m.Next).To(BeNil())
			Expect(m.DataOff).To(Equal(min(hw.DefaultHeadroom, len(m.Buf))))
			Expect(m.Pool).To(BeIdenticalTo(pool))
			Expect(m.SetData([]byte("dirty"))).To(Succeed())
			m.Flags = hw.TxIPChecksum
			m.Free()
			ms := make([]*hw.Mbuf, 16)
			Expect(pool.GetBulk(ms)).To(BeTrue())
			for _, m := range ms {
				Expect(m.DataLen).To(BeZero())
				Expect(m.Flags).To(BeZero())
				m.Free()
			}
		})

		It("accounts for a pool's gets, failed gets and returns", func() {
			const n = 64
			pool := p.NewPool("hwtest_acct", n)
			Expect(pool.Stats()).To(Equal(hw.MempoolStats{Size: n, Available: n}))
			ms := make([]*hw.Mbuf, n)
			for i := range ms {
				ms[i] = pool.Get()
				Expect(ms[i]).NotTo(BeNil(), "mbuf %d of %d", i, n)
			}
			Expect(pool.Get()).To(BeNil(), "an empty pool")
			Expect(pool.Stats()).To(Equal(hw.MempoolStats{Size: n, Available: 0, InUse: n, Gets: n, FailedGets: 1}))
			for _, m := range ms {
				m.Free()
			}
			Expect(pool.Stats()).To(Equal(hw.MempoolStats{Size: n, Available: n, InUse: 0, Gets: n, FailedGets: 1}))

			big := make([]*hw.Mbuf, n+1)
			Expect(pool.GetBulk(big[:40])).To(BeTrue())
			Expect(pool.GetBulk(big[40:])).To(BeFalse(), "25 more than the 24 left: all or nothing")
			Expect(big[40:]).To(HaveEach(BeNil()))
			Expect(pool.Stats().InUse).To(Equal(40))
			for _, m := range big[:40] {
				m.Free()
			}
			Expect(pool.Stats().Available).To(Equal(n))
		})

		It("returns a segment to its pool only when the last reference goes", func() {
			pool := p.NewPool("hwtest_ref", 8)
			m := pool.Get()
			m.RefInc()
			m.Free()
			Expect(pool.Stats().InUse).To(Equal(1))
			m.Free()
			Expect(pool.Stats().InUse).To(BeZero())
			a, b := pool.Get(), pool.Get()
			a.Next, a.NbSegs = b, 2
			a.Free()
			Expect(pool.Stats().InUse).To(BeZero(), "a chain is freed segment by segment")
		})

		It("keeps a segment the sender still holds alive through transmission", func() {
			settle(p)
			base := inUse(p)
			m := p.PoolA.Get()
			Expect(m).NotTo(BeNil())
			f := frames(p.B.MACAddr(), p.A.MACAddr(), 1, 300)[0]
			Expect(m.SetData(f)).To(Succeed())
			m.RefInc() // held twice: say, a TCP retransmission queue and the tx ring
			sendAll(p, p.A, p.PoolA, nil, m)
			got := receiveN(p, p.B, 1)
			Expect(got).To(Equal([][]byte{f}))
			settle(p)
			Expect(m.RefCnt).To(BeEquivalentTo(1), "the sender's reference remains")
			Expect(m.Bytes(nil)).To(Equal(f), "and its bytes are untouched")
			m.Free()
			waitUntil(p, func() bool { return inUse(p) == base }, "every mbuf back in its pool")
			if p.Caps.ZeroCopy {
				GinkgoWriter.Printf("zero-copy pair: the receiver got the sender's own mbuf\n")
			}
		})

		It("transmits a chained mbuf as one frame, where the pair takes chains", func() {
			if !p.Caps.Chains {
				Skip("the pair does not transmit multi-segment mbufs (EthCaps.Chains is false)")
			}
			settle(p)
			base := inUse(p)
			head := frames(p.B.MACAddr(), p.A.MACAddr(), 1, 60)[0]
			segs := [][]byte{head, []byte("the middle segment of a chain"), []byte("and its tail")}
			var first, last *hw.Mbuf
			var want []byte
			for _, s := range segs {
				m := p.PoolA.Get()
				Expect(m).NotTo(BeNil())
				Expect(m.SetData(s)).To(Succeed())
				want = append(want, s...)
				if first == nil {
					first = m
				} else {
					last.Next = m
				}
				last = m
			}
			first.NbSegs, first.PktLen = len(segs), len(want)
			sendAll(p, p.A, p.PoolA, nil, first)
			got := receiveN(p, p.B, 1)
			Expect(got).To(Equal([][]byte{want}))
			settle(p)
			waitUntil(p, func() bool { return inUse(p) == base }, "every segment back in its pool")
		})

		It("gives every mbuf of a transfer back to its pool", func() {
			settle(p)
			base := inUse(p)
			want := frames(p.B.MACAddr(), p.A.MACAddr(), 500, 128)
			Expect(transfer(p, p.A, p.PoolA, p.B, want)).To(HaveLen(500))
			waitUntil(p, func() bool { return inUse(p) == base }, fmt.Sprintf("in-use mbufs back to %d", base))
		})

		It("resets its counters", func() {
			transfer(p, p.A, p.PoolA, p.B, frames(p.B.MACAddr(), p.A.MACAddr(), 3, 80))
			settle(p)
			Expect(p.A.Stats().OPackets).To(BeNumerically(">", 0))
			p.A.ResetStats()
			p.B.ResetStats()
			for _, d := range []hw.EthDev{p.A, p.B} {
				s := d.Stats()
				Expect(s.IPackets + s.OPackets + s.IBytes + s.OBytes).To(BeZero())
			}
		})

		It("reports extended statistics by name", func() {
			xs := p.A.XStats()
			Expect(xs).NotTo(BeEmpty())
			seen := map[string]bool{}
			for _, x := range xs {
				Expect(x.Name).NotTo(BeEmpty())
				Expect(seen).NotTo(HaveKey(x.Name), "xstat names are unique")
				seen[x.Name] = true
			}
		})

		It("carries frames again after a stop and a start", func() {
			Expect(p.B.Stop()).To(Succeed())
			Expect(p.B.Start()).To(Succeed())
			waitUntil(p, func() bool { return p.A.Link().Up && p.B.Link().Up }, "link up again")
			want := frames(p.B.MACAddr(), p.A.MACAddr(), 10, 100)
			Expect(transfer(p, p.A, p.PoolA, p.B, want)).To(Equal(want))
			back := frames(p.A.MACAddr(), p.B.MACAddr(), 10, 100)
			Expect(transfer(p, p.B, p.PoolB, p.A, back)).To(Equal(back))
		})
	})
}

// frames builds n frames of size bytes from src to dst with a local
// experimental EtherType (IEEE 802 0x88b5) and a sequence number.
func frames(dst, src net.HardwareAddr, n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		b := make([]byte, size)
		copy(b[0:6], dst)
		copy(b[6:12], src)
		binary.BigEndian.PutUint16(b[12:14], 0x88b5)
		binary.BigEndian.PutUint32(b[14:18], uint32(i))
		for j := 18; j < size; j++ {
			b[j] = byte(i*7 + j)
		}
		out[i] = b
	}
	return out
}

// transfer sends want from one port and receives it at the other,
// interleaving bursts both ways so that neither ring stalls the other,
// and returns the frames received (their mbufs freed).
func transfer(p *EthPair, from hw.EthDev, pool hw.Mempool, to hw.EthDev, want [][]byte) [][]byte {
	var got [][]byte
	tx := make([]*hw.Mbuf, 0, 32)
	rx := make([]*hw.Mbuf, 32)
	sent := 0
	for i := 0; i < maxPolls && len(got) < len(want); i++ {
		for len(tx) < cap(tx) && sent+len(tx) < len(want) {
			m := pool.Get()
			if m == nil {
				break
			}
			Expect(m.SetData(want[sent+len(tx)])).To(Succeed())
			tx = append(tx, m)
		}
		k := from.TxBurst(0, tx)
		sent += k
		tx = append(tx[:0], tx[k:]...)
		r := to.RxBurst(0, rx)
		for _, m := range rx[:r] {
			got = append(got, m.Bytes(nil))
			m.Free()
		}
		if k == 0 && r == 0 {
			p.Advance()
		}
	}
	for _, m := range tx {
		m.Free()
	}
	return got
}

// sendAll transmits want (taking mbufs from pool) and then ms, retrying
// until the port took everything.
func sendAll(p *EthPair, from hw.EthDev, pool hw.Mempool, want [][]byte, ms ...*hw.Mbuf) {
	pkts := make([]*hw.Mbuf, 0, len(want)+len(ms))
	for _, f := range want {
		m := pool.Get()
		Expect(m).NotTo(BeNil())
		Expect(m.SetData(f)).To(Succeed())
		pkts = append(pkts, m)
	}
	pkts = append(pkts, ms...)
	sent := 0
	for i := 0; i < maxPolls && sent < len(pkts); i++ {
		k := from.TxBurst(0, pkts[sent:])
		sent += k
		if k == 0 {
			p.Advance()
		}
	}
	Expect(sent).To(Equal(len(pkts)), "the port took every frame")
}

// receiveN polls to until n frames arrived and returns them, freed.
func receiveN(p *EthPair, to hw.EthDev, n int) [][]byte {
	var got [][]byte
	rx := make([]*hw.Mbuf, 32)
	for i := 0; i < maxPolls && len(got) < n; i++ {
		k := to.RxBurst(0, rx)
		for _, m := range rx[:k] {
			got = append(got, m.Bytes(nil))
			m.Free()
		}
		if k == 0 {
			p.Advance()
		}
	}
	return got
}

// settle lets frames in flight arrive and be dropped (the specs leave
// nothing in flight) and tx mbufs be reclaimed.
func settle(p *EthPair) {
	for i := 0; i < 3; i++ {
		p.Advance()
	}
}

// inUse is the mbufs the pair's two pools have out.
func inUse(p *EthPair) int {
	n := p.PoolA.Stats().InUse
	if p.PoolB != p.PoolA {
		n += p.PoolB.Stats().InUse
	}
	return n
}

// waitUntil advances until cond holds, failing with what after
// maxPolls.
func waitUntil(p *EthPair, cond func() bool, what string) {
	for i := 0; i < maxPolls; i++ {
		if cond() {
			return
		}
		p.Advance()
	}
	Expect(cond()).To(BeTrue(), what)
}
