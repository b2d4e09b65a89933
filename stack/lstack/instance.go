package lstack

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/lstack/arpshare"
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
	// Mode says how applications wait for the instance: on a spinning
	// lcore, or as threads that sleep (see Mode). It sets no price.
	Mode Mode
	// TxOffloads are the transmit offloads enabled on the port
	// (hw.PortConf.TxOffloads). With TCP checksum offload, neither TCP
	// nor the network layer sums segments: the NIC does.
	TxOffloads hw.TxOffloads
	// MemBudget, when set, is the memory budget of TCP buffers the
	// instance shares with the other instances of its process (one made
	// from TCP.Mem, tcp.NewMemBudget); nil gives the instance a budget
	// of its own with TCP.Mem's limits.
	MemBudget *tcp.MemBudget
	// ConnBudget, when set, is the connection limit the instance shares
	// with the other instances of its process (Gazelle's max_connections
	// holds for the process, tcp.NewConnBudget(TCP.MaxConns)); nil
	// leaves only the instance's own TCP.MaxConns.
	ConnBudget *tcp.ConnBudget
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
	// meter is what the layers charge: the meter Poll was last given;
	// pkt is the same meter when it wants to know the packet bytes the
	// instance touches (PacketMeter), nil otherwise.
	meter hw.Meter
	pkt   PacketMeter
	now   time.Duration
	txOff hw.TxOffloads
	// appMeter and appMeters are SetAppMeter's decorator and the
	// decorated meters it made, one per application meter seen.
	appMeter  func(hw.Meter) hw.Meter
	appMeters map[hw.Meter]hw.Meter
	// tcpSum is how TCP's segments get their checksum on output.
	tcpSum iface.Checksum
	// send, when set, charges a socket call's own transmit on the
	// caller's core (SetSenderMeter).
	send *sender
	// bridges are the instance's Bridges, whose sockets' callers the
	// sender switch looks up.
	bridges []*Bridge

	rx    [Burst]*hw.Mbuf
	tx    []*hw.Mbuf
	stats Stats
	// arp is the ARP sharing among the instances of the port (SetPeers),
	// nil when the instance has no peers. NICs steer frames that are not
	// IP (ARP) to queue 0, so its instance hands a copy of each ARP frame
	// to its peers, as Gazelle copies ARP packets to every stack thread:
	// each instance keeps its own neighbour cache.
	arp *peerGroup
	// arpID is the instance's index in arp.
	arpID int
	// arpInput is inputShared bound once, so that a turn's drain does
	// not make a closure.
	arpInput func(*hw.Mbuf)
	// wake asks for a turn of the instance's core at a time, so that a
	// shared frame is handled even when nothing else arrives.
	wake func(at time.Duration)
}

// peerGroup is the instances that share ARP frames, and the mechanism
// that hands the copies over.
type peerGroup struct {
	members []*Instance
	share   *arpshare.Group
}

// SetWake gives the instance a way to ask its core for a turn, used when
// a peer shares an ARP frame: the driver's notify policy (in virtual
// time, sim.Core.Wake; in real time, the lcore's unpark, which ignores
// the time). It must be safe to call from a peer's turn. Call it before
// the instances are polled.
func (in *Instance) SetWake(wake func(at time.Duration)) { in.wake = wake }

// SetPeers names the instances of the same port, in queue order (the
// instance itself among them or not). Sharing is mutual: the call joins
// every instance named, and a later call naming the same instances is a
// no-op, so a driver may call it on each. A peer handles a shared frame
// on its own turn, where what the frame releases (packets that waited for
// the neighbour) joins the peer's own tx batch. The hand-off is
// lock-free (stack/lstack/arpshare), so peers may be polled from one
// goroutine (virtual time) or one each (stack/rt), provided their pools
// are safe for that; call it before the instances are polled.
func (in *Instance) SetPeers(peers []*Instance) {
	members := slices.Clone(peers)
	if !slices.Contains(members, in) {
		members = append(members, in)
	}
	if in.arp != nil && slices.Equal(in.arp.members, members) {
		return
	}
	if len(members) < 2 {
		in.arp = nil
		return
	}
	ms := make([]arpshare.Member, len(members))
	for i, p := range members {
		ms[i] = arpshare.Member{Pool: p.pool, Wake: p.notifyARP}
	}
	g := &peerGroup{members: members, share: arpshare.New(ms)}
	for i, p := range members {
		p.arp, p.arpID, p.arpInput = g, i, p.inputShared
	}
}

// notifyARP is the instance's wake policy for frames a peer shared.
func (in *Instance) notifyARP(at time.Duration) {
	if in.wake != nil {
		in.wake(at)
	}
}

// inputShared handles an ARP frame a peer shared, on the instance's turn.
func (in *Instance) inputShared(m *hw.Mbuf) { in.ifc.Input(in.now, m) }

// ARPCopyDrops returns the copies of ARP frames peers could not hand to
// the instance (no mbuf, no room in the hand-off). Safe from any
// goroutine.
func (in *Instance) ARPCopyDrops() uint64 {
	if in.arp == nil {
		return 0
	}
	return in.arp.share.Dropped(in.arpID)
}

// New makes an instance on queue of dev, allocating mbufs from pool (a
// pool on the lcore's NUMA node). rng seeds TCP's secrets.
func New(cfg Config, dev hw.EthDev, queue int, pool hw.Mempool, rng *rand.Rand) (*Instance, error) {
	in := &Instance{dev: dev, queue: queue, pool: pool, tx: make([]*hw.Mbuf, 0, Burst), txOff: cfg.TxOffloads, mode: cfg.Mode}
	if cfg.Iface.MAC == "" {
		cfg.Iface.MAC = dev.MACAddr().String()
	}
	var ifc *iface.Interface
	var err error
	if cfg.Iface.HasIPv6() {
		// IPv6's jitter and flow-label secret come from the run's seed;
		// an IPv4-only instance draws nothing, so its TCP secrets stay
		// what they were.
		ifc, err = iface.NewWithRand(cfg.Iface, (*link)(in), rand.NewPCG(rng.Uint64(), rng.Uint64()))
	} else {
		ifc, err = iface.New(cfg.Iface, (*link)(in))
	}
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
	ts, err := tcp.New(tcpCfg, rng, newTCPOutput(out, ifc))
	if err != nil {
		return nil, fmt.Errorf("lstack: %w", err)
	}
	ts.SetMemBudget(cfg.MemBudget)
	if cfg.ConnBudget != nil {
		ts.SetConnBudget(cfg.ConnBudget)
	}
	if err := ifc.RegisterTransport(ipv4.ProtoTCP, (*tcpInput)(in)); err != nil {
		return nil, fmt.Errorf("lstack: %w", err)
	}
	followPathMTU(ifc, ts)
	in.ifc, in.tcp = ifc, ts
	return in, nil
}

// Start announces the interface (gratuitous ARP) at now.
func (in *Instance) Start(now time.Duration) {
	in.ifc.Start(now)
}

// Mode returns how the instance's applications wait (see Mode).
func (in *Instance) Mode() Mode { return in.mode }

// PacketMeter is a meter that wants to know how many bytes of packet
// memory (mbufs of the instance's pool) the instance touches: the
// instance says so for every packet it receives or sends, and the meter
// prices it (a model of where that memory is; sim/numa.PacketMemory).
// A meter without the method is told nothing.
type PacketMeter interface {
	hw.Meter
	PacketBytes(n int)
}

// SetAppMeter gives the instance the decorator that prices the calls
// applications make to it (socket calls, readiness waits, the
// application side of a Bridge's sockets) on their own meters. The
// stack charges those calls as it serves them (an intercepted call over
// a ring); a binding that stands for another way of reaching the same
// engines (the kernel's system calls) decorates the application's meter
// with its own prices. nil, the default, charges the application's
// meter as it is. Call it before the instance is used.
func (in *Instance) SetAppMeter(wrap func(hw.Meter) hw.Meter) {
	in.appMeter, in.appMeters = wrap, nil
}

// app returns the meter an application's call through m is charged on.
// Each application meter is decorated once, so a call allocates nothing.
func (in *Instance) app(m hw.Meter) hw.Meter {
	if in.appMeter == nil {
		return m
	}
	if d, ok := in.appMeters[m]; ok {
		return d
	}
	if in.appMeters == nil {
		in.appMeters = map[hw.Meter]hw.Meter{}
	}
	d := in.appMeter(m)
	in.appMeters[m] = d
	return d
}

// Iface returns the network layer.
func (in *Instance) Iface() *iface.Interface { return in.ifc }

// TCP returns the TCP stack.
func (in *Instance) TCP() *tcp.Stack { return in.tcp }

// Stats returns the instance's counters. NoMbuf includes the copies of
// ARP frames a peer could not take from the instance's pool: the copy is
// the instance's mbuf, counted where peers' goroutines can add to it.
func (in *Instance) Stats() Stats {
	s := in.stats
	if in.arp != nil {
		s.NoMbuf += in.arp.share.NoMbuf(in.arpID)
	}
	return s
}

// ResetStats starts a new measurement window (the end of a warm-up): the
// instance's counters and those of its network layer and TCP go to zero;
// what they hold (connections, neighbours) stays.
func (in *Instance) ResetStats() {
	in.stats = Stats{}
	if in.arp != nil {
		in.arp.share.ResetNoMbuf(in.arpID)
	}
	in.ifc.ResetStats()
	in.tcp.ResetStats()
}

// Poll runs one turn: receive a burst, run the layers' timers, and send
// what they produced. It reports whether it did any work and its next
// deadline.
func (in *Instance) Poll(m hw.Meter) (bool, time.Duration) {
	if in.meter != m {
		in.meter = m
		in.pkt, _ = m.(PacketMeter)
		lm := in.layerMeter(m)
		in.ifc.SetMeter(lm)
		in.tcp.SetMeter(lm)
	}
	in.now = m.Now()
	in.stats.Polls++
	shared := 0
	if in.arp != nil {
		shared = in.arp.share.Drain(in.arpID, in.arpInput)
	}
	n := in.dev.RxBurst(in.queue, in.rx[:])
	if n > 0 {
		in.stats.RxBursts++
		in.stats.RxPackets += uint64(n)
		for i, mb := range in.rx[:n] {
			in.touched(mb.PktLen)
			if in.arp != nil {
				in.stats.ARPShared += uint64(in.arp.share.Share(in.arpID, in.now, mb))
			}
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
	if in.pkt != nil {
		for _, mb := range in.tx {
			in.pkt.PacketBytes(mb.PktLen)
		}
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

// touched tells the meter the instance touched a packet of n bytes.
func (in *Instance) touched(n int) {
	if in.pkt != nil {
		in.pkt.PacketBytes(n)
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
	if s.V6 {
		t.input6(now, s)
		return
	}
	t.tcp.InputVerified(now, tcp.IPFrom4(s.Src), tcp.IPFrom4(s.Dst), s.Payload)
}
