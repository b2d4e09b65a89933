package ringdev

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/rss"
	"github.com/savanna-sim/savanna/internal/spsc"
)

// Errors of the port's control path.
var (
	// ErrStarted is returned by calls that need a stopped port.
	ErrStarted = errors.New("port is started")
	// ErrNotConfigured is returned when a queue is set up before Configure.
	ErrNotConfigured = errors.New("port is not configured")
)

// queueStats are one queue's counters; only the queue's lcore writes
// them, readers use atomics.
type queueStats struct {
	packets atomic.Uint64
	bytes   atomic.Uint64
	errors  atomic.Uint64 // rx: imissed; tx: oerrors
	_       cacheLinePad
}

// rxQueue is one receive queue: one SPSC ring per peer tx queue.
type rxQueue struct {
	rings  []*spsc.Ring[*hw.Mbuf]
	next   int // round-robin start, owned by the polling lcore
	pool   hw.Mempool
	notify atomic.Pointer[func()]
	// small is the copybreak pool (Config.RxCopyBreak), nil without.
	small *Mempool
	// copies and fallbacks count the frames copied into small mbufs and
	// those passed by pointer because small was empty; the peer's tx
	// lcores add to them.
	copies, fallbacks atomic.Uint64
}

// Port is one end of a ring pair. It implements hw.EthDev; different
// queues may be used from different goroutines at once.
type Port struct {
	cfg  Config
	id   uint16
	mac  net.HardwareAddr
	peer *Port
	mu   sync.Mutex // control path only
	conf hw.PortConf
	rx   []*rxQueue
	ntx  int
	// txq is ntx for the peer's receive path, which polls only the
	// rings of the tx queues this port has (an atomic: the peer reads it
	// from its lcores while this port is configured).
	txq   atomic.Int32
	desc  int
	reta  []uint16
	key   []byte
	rssT  *rss.Table // key's Toeplitz table, built at Configure
	run   atomic.Bool
	ready atomic.Bool // configured with queues; read by the peer's tx path

	rxs [MaxQueues]queueStats
	txs [MaxQueues]queueStats
	// rxNoMbuf is never counted: frames are passed by pointer, no rx
	// allocation happens. Kept for the stats shape.
}

// NewPair makes two ports joined in memory: a's transmissions arrive at b
// and b's at a.
func NewPair(a, b Config) (*Port, *Port, error) {
	if err := a.Validate(); err != nil {
		return nil, nil, fmt.Errorf("ringdev port a: %w", err)
	}
	if err := b.Validate(); err != nil {
		return nil, nil, fmt.Errorf("ringdev port b: %w", err)
	}
	pa, pb := newPort(a.withDefaults(0), 0), newPort(b.withDefaults(1), 1)
	pa.peer, pb.peer = pb, pa
	return pa, pb, nil
}

func newPort(c Config, id uint16) *Port {
	mac, _ := net.ParseMAC(c.MAC)
	return &Port{cfg: c, id: id, mac: mac, key: DefaultRSSKey()}
}

// Name returns the port's name.
func (p *Port) Name() string { return p.cfg.Name }

// Info implements hw.EthDev.
func (p *Port) Info() hw.DevInfo {
	return hw.DevInfo{
		DriverName: "net_ring", MaxRxQueues: MaxQueues, MaxTxQueues: MaxQueues,
		MaxRxDesc: MaxRing, MaxTxDesc: MaxRing, MinRxDesc: MinRing, MinTxDesc: MinRing,
		MaxFrameLen: p.cfg.MTU + 14, SpeedMbps: p.cfg.SpeedMbps,
		RSSHashTypes: hw.RSSIPv4 | hw.RSSIPv4TCP, RETASize: RETASize, HashKeySize: 40,
		MaxMACAddrs: 1, DefaultRxRing: 1024, DefaultTxRing: 1024,
		RxOffloadCapa: p.rxCapa(), TxOffloadCapa: p.txCapa(),
	}
}

// rxCapa and txCapa are the checksum offloads offered with
// Config.ChecksumOffload, none without.
func (p *Port) rxCapa() hw.RxOffloads {
	if !p.cfg.ChecksumOffload {
		return 0
	}
	return hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum | hw.RxOffloadUDPChecksum
}

func (p *Port) txCapa() hw.TxOffloads {
	if !p.cfg.ChecksumOffload {
		return 0
	}
	return hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum | hw.TxOffloadUDPChecksum
}

// txChecksumFlags are the transmit flags that ask for a checksum.
const txChecksumFlags = hw.TxIPChecksum | hw.TxTCPChecksum | hw.TxUDPChecksum

// markChecksums turns a received frame's transmit checksum requests into
// receive verdicts (Config.ChecksumOffload): what the sender left to the
// link is good, as on Linux's loopback (CHECKSUM_PARTIAL arrives as
// CHECKSUM_UNNECESSARY); nothing else is marked.
func markChecksums(m *hw.Mbuf) {
	f := m.Flags
	if f&txChecksumFlags == 0 {
		return
	}
	m.Flags = f &^ txChecksumFlags
	if f&hw.TxIPChecksum != 0 {
		m.Flags |= hw.RxIPChecksumGood
	}
	if f&(hw.TxTCPChecksum|hw.TxUDPChecksum) != 0 {
		m.Flags |= hw.RxL4ChecksumGood
	}
}

// Configure implements hw.EthDev. The MTU of conf, when set, must not
// exceed the port's.
func (p *Port) Configure(conf hw.PortConf) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run.Load() {
		return fmt.Errorf("ringdev %q configure: %w", p.cfg.Name, ErrStarted)
	}
	if conf.RxQueues < 1 || conf.RxQueues > MaxQueues || conf.TxQueues < 1 || conf.TxQueues > MaxQueues {
		return fmt.Errorf("ringdev %q configure: %d rx and %d tx queues; 1..%d each", p.cfg.Name, conf.RxQueues, conf.TxQueues, MaxQueues)
	}
	if conf.MTU > p.cfg.MTU {
		return fmt.Errorf("ringdev %q configure: mtu %d exceeds the port's %d", p.cfg.Name, conf.MTU, p.cfg.MTU)
	}
	if conf.RxOffloads&^p.rxCapa() != 0 || conf.TxOffloads&^p.txCapa() != 0 {
		if !p.cfg.ChecksumOffload {
			return fmt.Errorf("ringdev %q configure: net_ring offers no checksum offloads (config checksum_offload is off)", p.cfg.Name)
		}
		return fmt.Errorf("ringdev %q configure: offloads rx %#x tx %#x not offered (rx %#x, tx %#x)", p.cfg.Name,
			uint64(conf.RxOffloads), uint64(conf.TxOffloads), uint64(p.rxCapa()), uint64(p.txCapa()))
	}
	if conf.RSSKey != nil {
		if len(conf.RSSKey) != 40 {
			return fmt.Errorf("ringdev %q configure: rss key of %d bytes; want 40", p.cfg.Name, len(conf.RSSKey))
		}
		p.key = append([]byte(nil), conf.RSSKey...)
	}
	p.rssT = rss.NewTable(p.key)
	p.conf = conf
	p.rx = make([]*rxQueue, conf.RxQueues)
	p.ntx = conf.TxQueues
	p.txq.Store(int32(conf.TxQueues))
	p.reta = make([]uint16, RETASize)
	rss.DefaultRETA(p.reta, conf.RxQueues)
	p.ready.Store(false)
	return nil
}

// SetupRxQueue implements hw.EthDev. nbDesc must be a power of two; each
// peer tx queue gets a ring of that size towards this queue.
func (p *Port) SetupRxQueue(q int, nbDesc int, pool hw.Mempool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rx == nil {
		return fmt.Errorf("ringdev %q rx queue %d: %w", p.cfg.Name, q, ErrNotConfigured)
	}
	if q < 0 || q >= len(p.rx) {
		return fmt.Errorf("ringdev %q rx queue %d: the port has %d", p.cfg.Name, q, len(p.rx))
	}
	if err := checkDesc(nbDesc); err != nil {
		return fmt.Errorf("ringdev %q rx queue %d: %w", p.cfg.Name, q, err)
	}
	rq := &rxQueue{pool: pool, rings: make([]*spsc.Ring[*hw.Mbuf], MaxQueues)}
	if cb := p.cfg.RxCopyBreak; cb > 0 {
		room := (hw.DefaultHeadroom + cb + 63) &^ 63
		small, err := NewMempool(fmt.Sprintf("%s.rxq%d.copybreak", p.cfg.Name, q), nbDesc, room)
		if err != nil {
			return fmt.Errorf("ringdev %q rx queue %d: %w", p.cfg.Name, q, err)
		}
		rq.small = small
	}
	for i := range rq.rings {
		r, err := spsc.New[*hw.Mbuf](nbDesc)
		if err != nil {
			return fmt.Errorf("ringdev %q rx queue %d: %w", p.cfg.Name, q, err)
		}
		rq.rings[i] = r
	}
	p.rx[q] = rq
	return nil
}

func checkDesc(n int) error {
	if n < MinRing || n > MaxRing || n&(n-1) != 0 {
		return fmt.Errorf("%d descriptors: want a power of two in %d..%d", n, MinRing, MaxRing)
	}
	return nil
}

// SetupTxQueue implements hw.EthDev. A tx queue has no ring of its own: it
// enqueues straight into the peer's rx rings, as net_ring shares rings.
func (p *Port) SetupTxQueue(q int, nbDesc int) error {
	if q < 0 || q >= p.ntx {
		return fmt.Errorf("ringdev %q tx queue %d: the port has %d", p.cfg.Name, q, p.ntx)
	}
	if err := checkDesc(nbDesc); err != nil {
		return fmt.Errorf("ringdev %q tx queue %d: %w", p.cfg.Name, q, err)
	}
	return nil
}

// Start implements hw.EthDev. Every rx queue must be set up.
func (p *Port) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rx == nil {
		return fmt.Errorf("ringdev %q start: %w", p.cfg.Name, ErrNotConfigured)
	}
	for q, rq := range p.rx {
		if rq == nil {
			return fmt.Errorf("ringdev %q start: rx queue %d is not set up", p.cfg.Name, q)
		}
	}
	p.ready.Store(true)
	p.run.Store(true)
	return nil
}

// Stop implements hw.EthDev.
func (p *Port) Stop() error {
	p.run.Store(false)
	return nil
}

// SetRxNotify registers fn, called by the peer's TxBurst after it put
// frames on rx queue q, so that a real-time lcore parked on an idle queue
// can be woken instead of polling. fn must be cheap and must not block.
func (p *Port) SetRxNotify(q int, fn func()) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if q < 0 || q >= len(p.rx) || p.rx[q] == nil {
		return fmt.Errorf("ringdev %q rx notify: queue %d is not set up", p.cfg.Name, q)
	}
	p.rx[q].notify.Store(&fn)
	return nil
}

// RxBurst implements hw.EthDev.
func (p *Port) RxBurst(q int, pkts []*hw.Mbuf) int {
	if !p.run.Load() || q < 0 || q >= len(p.rx) {
		return 0
	}
	rq := p.rx[q]
	n := 0
	// Only the rings of the peer's configured tx queues can hold frames
	// (TxBurst refuses other queues): polling all MaxQueues would cost
	// sixteen ring reads per burst on the idle path.
	nr := max(1, min(int(p.peer.txq.Load()), len(rq.rings)))
	if nr == 1 {
		n = rq.rings[0].DequeueBurst(pkts)
	} else {
		for i := 0; i < nr && n < len(pkts); i++ {
			r := rq.rings[(rq.next+i)%nr]
			n += r.DequeueBurst(pkts[n:])
		}
		rq.next = (rq.next + 1) % nr
	}
	if n == 0 {
		return 0
	}
	var bytes uint64
	mark := p.cfg.ChecksumOffload
	for _, m := range pkts[:n] {
		m.Port, m.Queue = p.id, uint16(q)
		bytes += uint64(m.PktLen)
		if mark {
			markChecksums(m)
		}
	}
	st := &p.rxs[q]
	st.packets.Add(uint64(n))
	st.bytes.Add(bytes)
	return n
}

// TxBurst implements hw.EthDev. Every packet is taken: it is delivered to
// the peer's rx ring chosen by RSS, or dropped and counted (oerrors when
// too long or the link is down, the peer's imissed when its ring is full).
func (p *Port) TxBurst(q int, pkts []*hw.Mbuf) int {
	if q < 0 || q >= int(p.txq.Load()) {
		return 0
	}
	peer := p.peer
	up := p.run.Load() && peer.run.Load() && peer.ready.Load()
	maxLen := p.cfg.MTU + 14
	st := &p.txs[q]
	var touched uint32
	var sent, bytes uint64
	for _, m := range pkts {
		if !up || m.PktLen > maxLen || m.PktLen < 14 {
			st.errors.Add(1)
			m.Free()
			continue
		}
		rq := peer.pickQueue(m)
		// Read the length before the hand-off: once enqueued, the mbuf
		// belongs to the peer's lcore, which may free it and see it
		// reused at once (the pool is last-in first-out).
		n := uint64(m.PktLen)
		if peer.cfg.RxCopyBreak > 0 && m.PktLen <= peer.cfg.RxCopyBreak {
			m = peer.rx[rq].copyBreak(m)
		}
		if !peer.rx[rq].rings[q].Enqueue(m) {
			peer.rxs[rq].errors.Add(1)
			m.Free()
			continue
		}
		touched |= 1 << rq
		sent++
		bytes += n
	}
	st.packets.Add(sent)
	st.bytes.Add(bytes)
	for touched != 0 {
		rq := 0
		for touched&(1<<rq) == 0 {
			rq++
		}
		touched &^= 1 << rq
		if fn := peer.rx[rq].notify.Load(); fn != nil {
			(*fn)()
		}
	}
	return len(pkts)
}

// copyBreak returns a copy of the single-segment frame m in a small
// mbuf of the queue's copybreak pool and frees m, or m itself when the
// pool is empty or m is a chain (sender's lcore). Everything the
// receiver reads of an mbuf is copied: the data at the same headroom,
// the offload flags, the RSS hash, the header lengths and the timestamp.
func (rq *rxQueue) copyBreak(m *hw.Mbuf) *hw.Mbuf {
	if m.Next != nil {
		return m
	}
	c := rq.small.Get()
	if c == nil {
		rq.fallbacks.Add(1)
		return m
	}
	if err := c.SetData(m.Data()); err != nil {
		c.Free()
		rq.fallbacks.Add(1)
		return m
	}
	c.Flags, c.RSSHash = m.Flags, m.RSSHash
	c.L2Len, c.L3Len, c.L4Len = m.L2Len, m.L3Len, m.L4Len
	c.Timestamp = m.Timestamp
	m.Free()
	rq.copies.Add(1)
	return c
}

// pickQueue chooses the rx queue of p for frame m by RSS.
func (p *Port) pickQueue(m *hw.Mbuf) int {
	if len(p.rx) == 1 || p.conf.RSSHashTypes == 0 {
		return 0
	}
	h, ok := flowHash(m.Data(), p.conf.RSSHashTypes, p.rssT)
	if !ok {
		return 0
	}
	m.RSSHash = h
	m.Flags |= hw.RxRSSHash
	return int(rss.RETAQueue(p.reta, h))
}

// Stats implements hw.EthDev.
func (p *Port) Stats() hw.EthStats {
	var s hw.EthStats
	nrx, ntx := max(1, len(p.rx)), max(1, p.ntx)
	s.QIPackets = make([]uint64, nrx)
	s.QIBytes = make([]uint64, nrx)
	s.QErrors = make([]uint64, nrx)
	s.QOPackets = make([]uint64, ntx)
	s.QOBytes = make([]uint64, ntx)
	for q := 0; q < nrx; q++ {
		st := &p.rxs[q]
		s.QIPackets[q], s.QIBytes[q], s.QErrors[q] = st.packets.Load(), st.bytes.Load(), st.errors.Load()
		s.IPackets += s.QIPackets[q]
		s.IBytes += s.QIBytes[q]
		s.IMissed += s.QErrors[q]
	}
	for q := 0; q < ntx; q++ {
		st := &p.txs[q]
		s.QOPackets[q], s.QOBytes[q] = st.packets.Load(), st.bytes.Load()
		s.OPackets += s.QOPackets[q]
		s.OBytes += s.QOBytes[q]
		s.OErrors += st.errors.Load()
	}
	return s
}

// XStats implements hw.EthDev: the basic counters by their DPDK xstat names.
func (p *Port) XStats() []hw.XStat {
	s := p.Stats()
	x := []hw.XStat{
		{Name: "rx_good_packets", Value: s.IPackets}, {Name: "tx_good_packets", Value: s.OPackets},
		{Name: "rx_good_bytes", Value: s.IBytes}, {Name: "tx_good_bytes", Value: s.OBytes},
		{Name: "rx_missed_errors", Value: s.IMissed}, {Name: "rx_errors", Value: s.IErrors},
		{Name: "tx_errors", Value: s.OErrors}, {Name: "rx_mbuf_allocation_errors", Value: s.RxNoMbuf},
	}
	for q := range s.QIPackets {
		x = append(x, hw.XStat{Name: fmt.Sprintf("rx_q%d_packets", q), Value: s.QIPackets[q]},
			hw.XStat{Name: fmt.Sprintf("rx_q%d_missed", q), Value: s.QErrors[q]})
	}
	for q := range s.QOPackets {
		x = append(x, hw.XStat{Name: fmt.Sprintf("tx_q%d_packets", q), Value: s.QOPackets[q]})
	}
	if p.cfg.RxCopyBreak > 0 {
		c, f := p.CopyBreakStats()
		x = append(x, hw.XStat{Name: "rx_copybreak_packets", Value: c}, hw.XStat{Name: "rx_copybreak_fallbacks", Value: f})
	}
	return x
}

// CopyBreakStats returns the frames copied into small mbufs on arrival
// (Config.RxCopyBreak) and those passed by pointer because a queue's
// copybreak pool was empty, summed over the receive queues.
func (p *Port) CopyBreakStats() (copies, fallbacks uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, rq := range p.rx {
		if rq != nil {
			copies += rq.copies.Load()
			fallbacks += rq.fallbacks.Load()
		}
	}
	return copies, fallbacks
}

// ResetStats implements hw.EthDev.
func (p *Port) ResetStats() {
	for q := range p.rxs {
		p.rxs[q].packets.Store(0)
		p.rxs[q].bytes.Store(0)
		p.rxs[q].errors.Store(0)
		p.txs[q].packets.Store(0)
		p.txs[q].bytes.Store(0)
		p.txs[q].errors.Store(0)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, rq := range p.rx {
		if rq != nil {
			rq.copies.Store(0)
			rq.fallbacks.Store(0)
		}
	}
}

// MACAddr implements hw.EthDev.
func (p *Port) MACAddr() net.HardwareAddr { return append(net.HardwareAddr(nil), p.mac...) }

// Link implements hw.EthDev: up while both ends are started.
func (p *Port) Link() hw.LinkStatus {
	up := p.run.Load() && p.peer.run.Load()
	return hw.LinkStatus{Up: up, SpeedMbps: p.cfg.SpeedMbps, FullDuplex: true}
}

// RETA implements hw.EthDev.
func (p *Port) RETA() []uint16 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]uint16(nil), p.reta...)
}

// SetRETA implements hw.EthDev (while stopped: the rx path reads the
// table without a lock).
func (p *Port) SetRETA(reta []uint16) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run.Load() {
		return fmt.Errorf("ringdev %q RETA: %w", p.cfg.Name, ErrStarted)
	}
	if len(reta) != RETASize {
		return fmt.Errorf("ringdev %q RETA: %d entries; the RETA size is %d", p.cfg.Name, len(reta), RETASize)
	}
	for i, q := range reta {
		if int(q) >= len(p.rx) {
			return fmt.Errorf("ringdev %q RETA: entry %d names rx queue %d; the port has %d", p.cfg.Name, i, q, len(p.rx))
		}
	}
	copy(p.reta, reta)
	return nil
}

// RSSKey implements hw.EthDev.
func (p *Port) RSSKey() []byte { return append([]byte(nil), p.key...) }

var _ hw.EthDev = (*Port)(nil)
