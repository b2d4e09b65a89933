package nic

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/rss"
	"github.com/savanna-sim/savanna/sim"
)

// txDesc is a tx descriptor in use: the mbuf the NIC read, and when its
// last bit left. As in DPDK, descriptors are reclaimed (and their mbufs
// freed) lazily, by the next TxBurst on the queue (tx_free_thresh), by
// TxDoneCleanup or by Stop.
type txDesc struct {
	m    *hw.Mbuf
	done time.Duration
}

type rxQueue struct {
	ring ring[*hw.Mbuf]
	// backlog holds the frames of a queue whose core drains the ring at
	// once (RxDrainer: Linux's NAPI), in arrival order.
	backlog queue[*hw.Mbuf]
	drain   bool
	pool    hw.Mempool
	core    QueueCore
	ready   bool
	stats   QueueStats
}

type txQueue struct {
	ring  ring[txDesc]
	core  QueueCore
	ready bool
	stats QueueStats
}

// Port is a simulated DPDK ethdev port. It implements hw.EthDev; the
// simulation adds BindQueue (which core polls a queue) and links.
//
// Like a DPDK port, it is driven from the engine's thread only.
type Port struct {
	eng    *sim.Engine
	name   string
	id     uint16
	preset PortPreset
	mac    [6]byte
	node   int
	speed  int // Mbit/s

	conf       hw.PortConf
	configured bool
	started    bool
	maxRxLen   int // largest frame taken, without FCS
	rssKey     []byte
	rssTable   *rss.Table
	reta       []uint16
	rx         []rxQueue
	tx         []txQueue

	wire *linkDir // the link direction this port transmits on
	taps []captureTap

	stats   PortCounters
	scratch FrameInfo
}

// NewPort creates a stopped, unconfigured port from a scenario entry.
// id is the DPDK port id (mbuf.port of received packets).
func NewPort(eng *sim.Engine, id uint16, cfg PortConfig) (*Port, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("nic %q: %w", cfg.Name, err)
	}
	p, _ := Preset(cfg.Model)
	port := &Port{eng: eng, name: cfg.Name, id: id, preset: p, node: cfg.NUMANode, speed: p.SpeedMbps}
	if cfg.Speed != "" {
		bps, _ := ParseBandwidth(cfg.Speed)
		port.speed = int(bps / 1_000_000)
	}
	if cfg.MAC != "" {
		port.mac, _ = parseMAC(cfg.MAC)
	} else {
		port.mac = derivedMAC(cfg.Name, id)
	}
	port.rssKey = MicrosoftRSSKey()
	port.rssTable = rss.NewTable(port.rssKey)
	port.reta = make([]uint16, p.RETASize)
	port.maxRxLen = p.MaxFrameLen - fcsLen
	return port, nil
}

// parseMAC parses a 48-bit MAC.
func parseMAC(s string) ([6]byte, error) {
	var mac [6]byte
	hwa, err := net.ParseMAC(s)
	if err != nil || len(hwa) != 6 {
		return mac, fmt.Errorf("%q is not a 48-bit MAC address", s)
	}
	copy(mac[:], hwa)
	return mac, nil
}

// derivedMAC makes a locally administered unicast MAC from the port's
// name and id, so that unnamed MACs are stable across runs.
func derivedMAC(name string, id uint16) [6]byte {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	v := h.Sum32()
	return [6]byte{0x02, byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v), byte(id)}
}

// Name returns the port's name.
func (p *Port) Name() string { return p.name }

// ID returns the port id.
func (p *Port) ID() uint16 { return p.id }

// Preset returns the port's model.
func (p *Port) Preset() PortPreset { return p.preset }

// Info implements hw.EthDev.
func (p *Port) Info() hw.DevInfo {
	pr := &p.preset
	return hw.DevInfo{
		DriverName:    pr.Driver,
		NUMANode:      p.node,
		MaxRxQueues:   pr.MaxRxQueues,
		MaxTxQueues:   pr.MaxTxQueues,
		MaxRxDesc:     pr.MaxRing,
		MaxTxDesc:     pr.MaxRing,
		MinRxDesc:     pr.MinRing,
		MinTxDesc:     pr.MinRing,
		MaxFrameLen:   pr.MaxFrameLen,
		SpeedMbps:     p.speed,
		RxOffloadCapa: pr.RxOffloadCapa,
		TxOffloadCapa: pr.TxOffloadCapa,
		RSSHashTypes:  pr.RSSHashTypes,
		RETASize:      pr.RETASize,
		HashKeySize:   pr.HashKeySize,
		MaxMACAddrs:   pr.MaxMACAddrs,
		DefaultRxRing: pr.DefaultRxRing,
		DefaultTxRing: pr.DefaultTxRing,
	}
}

// defaultMTU mirrors RTE_ETHER_MTU.
const defaultMTU = 1500

// ErrStarted is returned by calls that need a stopped port.
var ErrStarted = errors.New("port is started")

// Configure implements hw.EthDev (rte_eth_dev_configure). It resets the
// queues, the RETA (round-robin over the rx queues) and the statistics'
// per-queue arrays.
func (p *Port) Configure(conf hw.PortConf) error {
	pr := &p.preset
	where := func(format string, args ...any) error {
		return fmt.Errorf("nic %q configure: "+format, append([]any{p.name}, args...)...)
	}
	switch {
	case p.started:
		return where("%w", ErrStarted)
	case conf.RxQueues < 1 || conf.RxQueues > pr.MaxRxQueues:
		return where("rx queues %d outside 1..%d", conf.RxQueues, pr.MaxRxQueues)
	case conf.TxQueues < 1 || conf.TxQueues > pr.MaxTxQueues:
		return where("tx queues %d outside 1..%d", conf.TxQueues, pr.MaxTxQueues)
	case conf.MTU < 0 || conf.MTU+ethHeaderLen+fcsLen > pr.MaxFrameLen:
		return where("MTU %d exceeds the largest frame %d", conf.MTU, pr.MaxFrameLen)
	case conf.RxOffloads&^pr.RxOffloadCapa != 0:
		return where("rx offloads %#x not in capabilities %#x", conf.RxOffloads, pr.RxOffloadCapa)
	case conf.TxOffloads&^pr.TxOffloadCapa != 0:
		return where("tx offloads %#x not in capabilities %#x", conf.TxOffloads, pr.TxOffloadCapa)
	case conf.RSSHashTypes&^pr.RSSHashTypes != 0:
		return where("RSS hash types %#x not in capabilities %#x", conf.RSSHashTypes, pr.RSSHashTypes)
	case conf.RSSKey != nil && len(conf.RSSKey) != RSSKeyLen && len(conf.RSSKey) != pr.HashKeySize:
		return where("RSS key of %d bytes; want %d or %d", len(conf.RSSKey), RSSKeyLen, pr.HashKeySize)
	}
	p.releaseQueues()
	p.conf = conf
	p.conf.RSSKey = nil
	if conf.RSSKey != nil {
		p.rssKey = append(p.rssKey[:0], conf.RSSKey...)
		p.rssTable = rss.NewTable(p.rssKey)
	}
	// DPDK 22.11's rte_eth_dev_configure takes an MTU of 0 as
	// RTE_ETHER_MTU (1500); the NIC then drops longer frames. A VLAN
	// tag is allowed on top of the MTU, as drivers do.
	mtu := conf.MTU
	if mtu == 0 {
		mtu = defaultMTU
	}
	p.maxRxLen = min(mtu+ethHeaderLen+vlanTagLen, pr.MaxFrameLen-fcsLen)
	p.rx = make([]rxQueue, conf.RxQueues)
	p.tx = make([]txQueue, conf.TxQueues)
	DefaultRETA(p.reta, conf.RxQueues)
	p.configured = true
	return nil
}

// releaseQueues frees every mbuf the rings hold.
func (p *Port) releaseQueues() {
	for i := range p.rx {
		q := &p.rx[i]
		for q.ring.len() > 0 {
			q.ring.pop().Free()
			p.stats.RxFlushed++
		}
		for q.backlog.len() > 0 {
			q.backlog.pop().Free()
			p.stats.RxFlushed++
		}
	}
	for i := range p.tx {
		q := &p.tx[i]
		for q.ring.len() > 0 {
			q.ring.pop().m.Free()
		}
	}
}

// ringSize resolves a descriptor count: 0 takes the default, as
// rte_eth_rx_queue_setup does.
func (p *Port) ringSize(n, def int) (int, error) {
	if n == 0 {
		n = def
	}
	if err := p.preset.checkRing(n); err != nil {
		return 0, err
	}
	return n, nil
}

// SetupRxQueue implements hw.EthDev (rte_eth_rx_queue_setup).
func (p *Port) SetupRxQueue(q, nbDesc int, pool hw.Mempool) error {
	switch {
	case !p.configured:
		return fmt.Errorf("nic %q rx queue %d: port not configured", p.name, q)
	case p.started:
		return fmt.Errorf("nic %q rx queue %d: %w", p.name, q, ErrStarted)
	case q < 0 || q >= len(p.rx):
		return fmt.Errorf("nic %q rx queue %d: port has %d rx queues", p.name, q, len(p.rx))
	case pool == nil:
		return fmt.Errorf("nic %q rx queue %d: no mempool", p.name, q)
	case pool.DataRoom() <= hw.DefaultHeadroom:
		return fmt.Errorf("nic %q rx queue %d: mempool %q data room %d leaves no room after the headroom", p.name, q, pool.Name(), pool.DataRoom())
	}
	n, err := p.ringSize(nbDesc, p.preset.DefaultRxRing)
	if err != nil {
		return fmt.Errorf("nic %q rx queue %d: ring size %w", p.name, q, err)
	}
	rq := &p.rx[q]
	for rq.pending() > 0 {
		var m [1]*hw.Mbuf
		rq.dequeue(m[:])
		m[0].Free()
	}
	rq.ring = newRing[*hw.Mbuf](n)
	rq.pool = pool
	rq.ready = true
	return nil
}

// SetupTxQueue implements hw.EthDev (rte_eth_tx_queue_setup).
func (p *Port) SetupTxQueue(q, nbDesc int) error {
	switch {
	case !p.configured:
		return fmt.Errorf("nic %q tx queue %d: port not configured", p.name, q)
	case p.started:
		return fmt.Errorf("nic %q tx queue %d: %w", p.name, q, ErrStarted)
	case q < 0 || q >= len(p.tx):
		return fmt.Errorf("nic %q tx queue %d: port has %d tx queues", p.name, q, len(p.tx))
	}
	n, err := p.ringSize(nbDesc, p.preset.DefaultTxRing)
	if err != nil {
		return fmt.Errorf("nic %q tx queue %d: ring size %w", p.name, q, err)
	}
	tq := &p.tx[q]
	for tq.ring.len() > 0 {
		tq.ring.pop().m.Free()
	}
	tq.ring = newRing[txDesc](n)
	tq.ready = true
	return nil
}

// Start implements hw.EthDev (rte_eth_dev_start).
func (p *Port) Start() error {
	if !p.configured {
		return fmt.Errorf("nic %q start: port not configured", p.name)
	}
	for i := range p.rx {
		if !p.rx[i].ready {
			return fmt.Errorf("nic %q start: rx queue %d not set up", p.name, i)
		}
	}
	for i := range p.tx {
		if !p.tx[i].ready {
			return fmt.Errorf("nic %q start: tx queue %d not set up", p.name, i)
		}
	}
	p.started = true
	return nil
}

// Stop implements hw.EthDev (rte_eth_dev_stop). As PMDs do, it frees the
// mbufs left in the rings; received packets never read are counted in
// the xstat rx_flushed_at_stop.
func (p *Port) Stop() error {
	p.started = false
	p.releaseQueues()
	return nil
}

// QueueCore is the lcore a queue is bound to: burst calls on the queue
// are charged to its meter, and arrivals ring its doorbell. A *sim.Core
// is one; so is a sim.LayerMeter (the driver's share of a core), or a
// meter that prices the work as another driver does (the kernel's).
type QueueCore interface {
	hw.Meter
	Wake(at time.Duration)
}

// BindQueue makes core the lcore that polls rx queue q and transmits on
// tx queue q: the NIC rings its doorbell (Wake) when a packet lands on
// rx queue q, and burst calls on queue q are charged to it. Unbound
// queues charge nothing. It is simulation wiring, not part of hw.EthDev.
func (p *Port) BindQueue(q int, core QueueCore) error {
	if q < 0 || (q >= len(p.rx) && q >= len(p.tx)) {
		return fmt.Errorf("nic %q bind queue %d: port has %d rx and %d tx queues", p.name, q, len(p.rx), len(p.tx))
	}
	if q < len(p.rx) {
		p.rx[q].core = core
		p.rx[q].drain = drains(core)
	}
	if q < len(p.tx) {
		p.tx[q].core = core
	}
	return nil
}

// RxBurst implements hw.EthDev (rte_eth_rx_burst).
func (p *Port) RxBurst(q int, pkts []*hw.Mbuf) int {
	if q < 0 || q >= len(p.rx) || !p.started {
		return 0
	}
	rq := &p.rx[q]
	n := rq.dequeue(pkts)
	if c := rq.core; c != nil {
		c.Charge(hw.CostNICRxBurst, 1)
		c.Charge(hw.CostNICRxPacket, int64(n))
	}
	return n
}

// RxQueueCount returns the packets waiting on rx queue q
// (rte_eth_rx_queue_count).
func (p *Port) RxQueueCount(q int) int {
	if q < 0 || q >= len(p.rx) {
		return 0
	}
	return p.rx[q].pending()
}

// queueNow is the time of the lcore that owns tx queue q: a core in the
// middle of a turn is ahead of the engine by the work it has charged.
func (p *Port) queueNow(core QueueCore) time.Duration {
	if core != nil {
		return core.Now()
	}
	return p.eng.Now()
}

// reclaim frees the mbufs of descriptors whose frames have left.
func (tq *txQueue) reclaim(now time.Duration) {
	for tq.ring.len() > 0 && tq.ring.peek().done <= now {
		tq.ring.pop().m.Free()
	}
}

// TxDoneCleanup frees the mbufs of tx queue q whose frames have left
// (rte_eth_tx_done_cleanup) and returns how many it freed.
func (p *Port) TxDoneCleanup(q int) int {
	if q < 0 || q >= len(p.tx) {
		return 0
	}
	tq := &p.tx[q]
	before := tq.ring.len()
	tq.reclaim(p.queueNow(tq.core))
	return before - tq.ring.len()
}

// TxBurst implements hw.EthDev (rte_eth_tx_burst). It takes packets while
// the tx ring has free descriptors; each one goes onto the link at line
// rate after those before it. A port whose link is down or missing takes
// the packets and drops them, counting oerrors and tx_link_down, as a
// NIC without carrier does.
func (p *Port) TxBurst(q int, pkts []*hw.Mbuf) int {
	if q < 0 || q >= len(p.tx) || !p.started {
		return 0
	}
	tq := &p.tx[q]
	now := p.queueNow(tq.core)
	tq.reclaim(now)
	n := 0
	for _, m := range pkts {
		if tq.ring.full() {
			p.stats.TxRingFull++
			break
		}
		n++
		p.transmit(tq, m, now)
	}
	if c := tq.core; c != nil {
		c.Charge(hw.CostNICTxBurst, 1)
		c.Charge(hw.CostNICTxPacket, int64(n))
	}
	return n
}

// transmit puts one packet taken by TxBurst on the wire, or drops it
// with a reason.
func (p *Port) transmit(tq *txQueue, m *hw.Mbuf, now time.Duration) {
	size := m.PktLen
	switch {
	case m.Next != nil && p.conf.TxOffloads&hw.TxOffloadMultiSegs == 0:
		p.stats.TxMultiSegNotEnabled++
		p.dropTx(m)
		return
	case size < ethHeaderLen || size > p.preset.MaxFrameLen-fcsLen || size != chainLen(m):
		p.stats.TxBadLength++
		p.dropTx(m)
		return
	case p.wire == nil || !p.wire.up():
		p.stats.TxLinkDown++
		p.dropTx(m)
		return
	}
	s, buf := p.wire.reserve(size)
	// The NIC reads the packet (DMA); the copy is what goes on the
	// wire, so offloads write into it and not into the mbuf, which
	// the stack may still hold a reference to.
	m.Bytes(buf[:0])
	if m.Flags&(hw.TxIPChecksum|hw.TxTCPChecksum|hw.TxUDPChecksum) != 0 {
		res := applyTxChecksums(buf, m, p.conf.TxOffloads)
		if res.notEnabled {
			p.stats.TxOffloadNotEnabled++
		}
		if res.malformed {
			p.stats.TxOffloadBadHeaders++
		}
		if res.phdrMissing {
			p.stats.TxL4PseudoHeaderMissing++
		}
	}
	start, done := p.wire.commit(s, now)
	for i := range p.taps {
		p.taps[i].write(start, buf)
	}
	tq.ring.push(txDesc{m: m, done: done})
	tq.stats.Packets++
	tq.stats.Bytes += uint64(size)
	p.stats.OPackets++
	p.stats.OBytes += uint64(size)
}

// dropTx frees a packet the port took but could not send.
func (p *Port) dropTx(m *hw.Mbuf) {
	p.stats.OErrors++
	m.Free()
}

// chainLen sums the data of a chain, bounded so that a cyclic chain
// cannot hang the model.
func chainLen(m *hw.Mbuf) int {
	n := 0
	for seg, i := m, 0; seg != nil && i <= 1<<16; seg, i = seg.Next, i+1 {
		n += seg.DataLen
	}
	return n
}

// receive implements endpoint: a frame has arrived from the wire.
func (p *Port) receive(data []byte, now time.Duration, badFCS bool) {
	// A capture taps the wire: it sees every frame that reaches the
	// port, whatever the port then does with it.
	for i := range p.taps {
		p.taps[i].write(now, data)
	}
	switch {
	case !p.started:
		p.stats.RxPortStopped++
		return
	case badFCS:
		p.stats.IErrors++
		p.stats.RxCRCErrors++
		return
	case len(data) > p.maxRxLen:
		p.stats.IErrors++
		p.stats.RxOversize++
		return
	case len(data) < ethHeaderLen:
		p.stats.IErrors++
		p.stats.RxUndersize++
		return
	}
	f := &p.scratch
	q := 0
	var hash uint32
	hashed := false
	if p.conf.RSSHashTypes != 0 || p.conf.RxOffloads != 0 {
		Classify(data, f)
		if p.conf.RSSHashTypes != 0 {
			var t RSSTuple
			if rssInput(f, p.conf.RSSHashTypes, &t) {
				hash, hashed = p.rssTable.Hash(t.Bytes()), true
				q = int(RETAQueue(p.reta, hash))
			}
		}
	}
	rq := &p.rx[q]
	m := rq.pool.Get()
	if m == nil {
		p.stats.RxNoMbuf++
		rq.stats.NoMbuf++
		return
	}
	if len(data) > m.Tailroom() {
		// No scatter rx in the model: a frame larger than one mbuf
		// is an error the NIC counts.
		m.Free()
		p.stats.IErrors++
		p.stats.RxMbufTooSmall++
		return
	}
	copy(m.Buf[m.DataOff:], data)
	m.DataLen, m.PktLen = len(data), len(data)
	m.Port, m.Queue = p.id, uint16(q)
	m.Timestamp = int64(now)
	if p.conf.RxOffloads != 0 {
		flags := rxChecksumFlags(data, f, p.conf.RxOffloads)
		if flags&hw.RxIPChecksumBad != 0 {
			p.stats.RxIPChecksumBad++
		}
		if flags&hw.RxL4ChecksumBad != 0 {
			p.stats.RxL4ChecksumBad++
		}
		m.Flags |= flags
	}
	if hashed {
		m.RSSHash = hash
		if p.conf.RxOffloads&hw.RxOffloadRSSHash != 0 {
			m.Flags |= hw.RxRSSHash
		}
	}
	if !rq.enqueue(m) {
		m.Free()
		p.stats.IMissed++
		rq.stats.Missed++
		return
	}
	p.stats.IPackets++
	p.stats.IBytes += uint64(len(data))
	rq.stats.Packets++
	rq.stats.Bytes += uint64(len(data))
	if rq.core != nil {
		rq.core.Wake(now)
	}
}

// attach implements endpoint.
func (p *Port) attach(d *linkDir) error {
	if p.wire != nil {
		return fmt.Errorf("nic %q is already connected to link %q", p.name, p.wire.link.name)
	}
	p.wire = d
	return nil
}

func (p *Port) speedMbps() int       { return p.speed }
func (p *Port) active() bool         { return p.started }
func (p *Port) endpointName() string { return "nic " + p.name }

// MACAddr implements hw.EthDev.
func (p *Port) MACAddr() net.HardwareAddr { return net.HardwareAddr(append([]byte(nil), p.mac[:]...)) }

// Link implements hw.EthDev: up when the port is started and its link
// carries frames; the speed is the link's rate.
func (p *Port) Link() hw.LinkStatus {
	st := hw.LinkStatus{SpeedMbps: p.speed, FullDuplex: true}
	if p.wire != nil {
		st.SpeedMbps = int(p.wire.link.bps / 1_000_000)
		st.Up = p.started && p.wire.up()
	}
	return st
}

// RETA implements hw.EthDev.
func (p *Port) RETA() []uint16 { return append([]uint16(nil), p.reta...) }

// SetRETA implements hw.EthDev. Every entry must name a configured rx
// queue.
func (p *Port) SetRETA(reta []uint16) error {
	if len(reta) != len(p.reta) {
		return fmt.Errorf("nic %q RETA: %d entries; the RETA size is %d", p.name, len(reta), len(p.reta))
	}
	for i, q := range reta {
		if int(q) >= max(1, len(p.rx)) {
			return fmt.Errorf("nic %q RETA: entry %d names rx queue %d; the port has %d", p.name, i, q, len(p.rx))
		}
	}
	copy(p.reta, reta)
	return nil
}

// RSSKey implements hw.EthDev.
func (p *Port) RSSKey() []byte { return append([]byte(nil), p.rssKey...) }

// compile-time check that Port is an ethdev.
var _ hw.EthDev = (*Port)(nil)
