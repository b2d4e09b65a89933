package lstack

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Burst is the most packets moved per rx or tx burst call, DPDK's usual
// 32 (Gazelle's nic_read_number defaults to 128; 32 keeps latency low).
const Burst = 32

// Config configures one instance.
type Config struct {
	// Iface is the network layer's configuration (address, MTU, ARP ...).
	Iface iface.Config
	// TCP is the TCP configuration.
	TCP tcp.Config
	// Mode says how applications reach the instance: the user-space
	// stack's rings or the kernel's system calls.
	Mode Mode
	// RemoteMemory is how much dearer the packet memory (the port's
	// mbuf pool and its descriptor rings) is for the instance's core than
	// local memory: (SLIT distance - 10) / 10 between the core's node and
	// the pool's, 0 when they are the same node (sim/numa RemoteBytes).
	// Each byte received or sent is charged hw.CostRemoteNUMAByte times
	// this factor. Gazelle keeps it 0 by taking mbufs from the core's node.
	RemoteMemory float64
	// TxOffloads are the transmit offloads enabled on the port
	// (hw.PortConf.TxOffloads). With TCP checksum offload, neither TCP
	// nor the network layer sums segments: the NIC does.
	TxOffloads hw.TxOffloads
}

// Stats are an instance's own counters; the layers' counters are in
// their own Stats.
type Stats struct {
	// Polls counts Poll calls; IdlePolls those that found nothing to do.
	Polls     uint64 `json:"polls"`
	IdlePolls uint64 `json:"idle_polls"`
	// RxBursts and RxPackets count receive bursts that returned packets
	// and the packets.
	RxBursts  uint64 `json:"rx_bursts"`
	RxPackets uint64 `json:"rx_packets"`
	// TxBursts and TxPackets count transmit bursts and packets sent.
	TxBursts  uint64 `json:"tx_bursts"`
	TxPackets uint64 `json:"tx_packets"`
	// TxRingFull counts packets the tx ring refused at the end of a turn,
	// freed and left to TCP's retransmission.
	TxRingFull uint64 `json:"tx_ring_full_drops"`
	// NoMbuf counts allocations refused by the mempool.
	NoMbuf uint64 `json:"no_mbuf"`
	// ARPShared counts ARP frames copied to peer instances.
	ARPShared uint64 `json:"arp_shared"`
}

// Instance is one stack on one queue pair.
type Instance struct {
	dev   hw.EthDev
	queue int
	pool  hw.Mempool
	ifc   *iface.Interface
	tcp   *tcp.Stack
	mode  Mode
	// meter is what the layers charge: the meter Poll was last given.
	meter hw.Meter
	now   time.Duration
	txOff hw.TxOffloads
	// remote is Config.RemoteMemory.
	remote float64
	// tcpSum is how TCP's segments get their checksum on output.
	tcpSum iface.Checksum

	rx    [Burst]*hw.Mbuf
	tx    []*hw.Mbuf
	stats Stats
	// peers are the other instances on the same port. NICs steer frames
	// that are not IP (ARP) to queue 0, so its instance hands a copy of
	// each ARP frame to its peers, as Gazelle copies ARP packets to every
	// stack thread: each instance keeps its own neighbour cache.
	peers []*Instance
	// arpInbox holds the ARP frames peers shared, for the next Poll: a
	// frame is handled on the instance's own turn, where what it releases
	// (packets that waited for the neighbour) joins the instance's own tx
	// batch.
	arpInbox []*hw.Mbuf
	// wake asks for a turn of the instance's core at a time, so that a
	// shared frame is handled even when nothing else arrives.
	wake func(at time.Duration)
}

// SetWake gives the instance a way to ask its core for a turn (in
// virtual time, sim.Core.Wake), used when a peer shares an ARP frame.
func (in *Instance) SetWake(wake func(at time.Duration)) { in.wake = wake }

// SetPeers names the other instances of the same port. Peers share ARP
// frames through each other's inboxes without locks, so they must be
// polled from one goroutine, as in virtual time; the real-time driver
// fans frames out to its lcores itself (stack/rt).
func (in *Instance) SetPeers(peers []*Instance) {
	in.peers = in.peers[:0]
	for _, p := range peers {
		if p != in {
			in.peers = append(in.peers, p)
		}
	}
}

// shareARP gives each peer a copy of an ARP frame.
func (in *Instance) shareARP(m *hw.Mbuf) {
	d := m.Data()
	if len(in.peers) == 0 || len(d) < 14 || d[12] != 0x08 || d[13] != 0x06 {
		return
	}
	for _, p := range in.peers {
		c := p.pool.Get()
		if c == nil {
			p.stats.NoMbuf++
			continue
		}
		if err := c.SetData(d); err != nil {
			c.Free()
			continue
		}
		in.stats.ARPShared++
		p.arpInbox = append(p.arpInbox, c)
		if p.wake != nil {
			p.wake(in.now)
		}
	}
}

// New makes an instance on queue of dev, allocating mbufs from pool (a
// pool on the lcore's NUMA node). rng seeds TCP's secrets.
func New(cfg Config, dev hw.EthDev, queue int, pool hw.Mempool, rng *rand.Rand) (*Instance, error) {
	in := &Instance{dev: dev, queue: queue, pool: pool, tx: make([]*hw.Mbuf, 0, Burst), txOff: cfg.TxOffloads, mode: cfg.Mode, remote: cfg.RemoteMemory}
	if cfg.Iface.MAC == "" {
		cfg.Iface.MAC = dev.MACAddr().String()
	}
	ifc, err := iface.New(cfg.Iface, (*link)(in))
	if err != nil {
		return nil, fmt.Errorf("lstack: %w", err)
	}
	tcpCfg := cfg.TCP
	if tcpCfg.MTU == 0 {
		tcpCfg.MTU = ifc.MTU()
	}
	if cfg.TxOffloads&hw.TxOffloadTCPChecksum != 0 {
		// TCP writes only the pseudo-header sum; the network layer marks
		// the mbuf for the NIC to finish it (RTE_MBUF_F_TX_TCP_CKSUM).
		tcpCfg.ChecksumOffloadTx = true
		in.tcpSum = iface.ChecksumTCP
	}
	out := iface.NewSegmentSender(ifc, ipv4.ProtoTCP,
		iface.OutputOptions{DontFrag: true, Checksum: in.tcpSum})
	ts, err := tcp.New(tcpCfg, rng, out)
	if err != nil {
		return nil, fmt.Errorf("lstack: %w", err)
	}
	if err := ifc.RegisterTransport(ipv4.ProtoTCP, (*tcpInput)(in)); err != nil {
		return nil, fmt.Errorf("lstack: %w", err)
	}
	in.ifc, in.tcp = ifc, ts
	return in, nil
}

// Start announces the interface (gratuitous ARP) at now.
func (in *Instance) Start(now time.Duration) {
	in.ifc.Start(now)
}

// Mode returns the instance's cost mode.
func (in *Instance) Mode() Mode { return in.mode }

// Iface returns the network layer.
func (in *Instance) Iface() *iface.Interface { return in.ifc }

// TCP returns the TCP stack.
func (in *Instance) TCP() *tcp.Stack { return in.tcp }

// Stats returns the instance's counters.
func (in *Instance) Stats() Stats { return in.stats }

// ResetStats starts a new measurement window (the end of a warm-up): the
// instance's counters and those of its network layer and TCP go to zero;
// what they hold (connections, neighbours) stays.
func (in *Instance) ResetStats() {
	in.stats = Stats{}
	in.ifc.ResetStats()
	in.tcp.ResetStats()
}

// Poll runs one turn: receive a burst, run the layers' timers, and send
// what they produced. It reports whether it did any work and its next
// deadline.
func (in *Instance) Poll(m hw.Meter) (bool, time.Duration) {
	if in.meter != m {
		in.meter = m
		in.ifc.SetMeter(in.meter)
		in.tcp.SetMeter(in.meter)
	}
	in.now = m.Now()
	in.stats.Polls++
	shared := len(in.arpInbox)
	for i, mb := range in.arpInbox {
		in.ifc.Input(in.now, mb)
		in.arpInbox[i] = nil
	}
	in.arpInbox = in.arpInbox[:0]
	n := in.dev.RxBurst(in.queue, in.rx[:])
	if n > 0 {
		in.stats.RxBursts++
		in.stats.RxPackets += uint64(n)
		for i, mb := range in.rx[:n] {
			in.chargeRemote(mb.PktLen)
			in.shareARP(mb)
			in.ifc.Input(in.now, mb)
			in.rx[i] = nil
		}
	}
	next := min(in.ifc.Poll(in.now), in.tcp.Poll(in.now))
	sent := len(in.tx)
	in.flush()
	if n == 0 && sent == 0 && shared == 0 {
		in.stats.IdlePolls++
		return false, next
	}
	return true, next
}

// flush hands the batch to the tx queue; what the ring refuses is freed
// and counted (TCP retransmits it).
func (in *Instance) flush() {
	if len(in.tx) == 0 {
		return
	}
	for _, mb := range in.tx {
		in.chargeRemote(mb.PktLen)
	}
	sent := in.dev.TxBurst(in.queue, in.tx)
	in.stats.TxBursts++
	in.stats.TxPackets += uint64(sent)
	for _, mb := range in.tx[sent:] {
		mb.Free()
		in.stats.TxRingFull++
	}
	clear(in.tx)
	in.tx = in.tx[:0]
}

// chargeRemote charges the extra cost of touching n bytes of packet
// memory on another NUMA node.
func (in *Instance) chargeRemote(n int) {
	if in.remote > 0 && in.meter != nil {
		in.meter.Charge(hw.CostRemoteNUMAByte, int64(float64(n)*in.remote+0.5))
	}
}

// link is the instance as the network layer's iface.Link.
type link Instance

// Alloc implements iface.Link.
func (l *link) Alloc() *hw.Mbuf {
	m := l.pool.Get()
	if m == nil {
		l.stats.NoMbuf++
	}
	return m
}

// Transmit implements iface.Link: frames are batched and sent per burst.
func (l *link) Transmit(m *hw.Mbuf) {
	l.tx = append(l.tx, m)
	if len(l.tx) == Burst {
		(*Instance)(l).flush()
	}
}

// TxOffloads implements iface.Link.
func (l *link) TxOffloads() hw.TxOffloads { return l.txOff }

// tcpInput hands TCP segments from the network layer to the TCP stack.
type tcpInput Instance

// HandleSegment implements iface.TransportHandler; the network layer has
// verified the checksum.
func (t *tcpInput) HandleSegment(now time.Duration, s iface.Segment) {
	if s.Broadcast {
		return
	}
	t.tcp.InputVerified(now, s.Src, s.Dst, s.Payload)
}
