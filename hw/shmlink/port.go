package shmlink

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// ErrNoRSS is returned by the RSS calls: the link has one queue pair.
var ErrNoRSS = errors.New("shmlink: one queue pair, no RSS redirection table")

// checkEvery is how often an idle watcher looks at the peer's lock, and
// so how soon a peer that died is seen gone.
const checkEvery = 100 * time.Millisecond

// Port is one side of a shared-memory link: an hw.EthDev with one rx
// and one tx queue. RxBurst and TxBurst may run on different goroutines
// (one lcore each, as DPDK allows); the rest is safe from anywhere.
type Port struct {
	cfg Config
	mac net.HardwareAddr
	reg *region
	lay layout
	// tx is the direction this side produces on, rx the one it
	// consumes; txHead and rxTail are this side's own indexes (the
	// copies in the region are published, never read back).
	tx, rx         ring
	txHead, rxTail uint32
	// running and peerRunning are the sides' running flags.
	running, peerRunning *atomic.Uint32

	mu         sync.Mutex
	configured bool
	pool       hw.Mempool
	started    atomic.Bool
	// peerUp caches the peer's lock; Link and the watcher refresh it.
	peerUp atomic.Bool
	notify atomic.Pointer[func()]
	stopW  atomic.Bool
	wg     sync.WaitGroup
	c      counters
}

// Open creates or attaches to the region c names and returns this
// side's port, stopped.
func Open(c Config) (*Port, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("shmlink: %w", err)
	}
	c = c.withDefaults()
	reg, err := openRegion(c)
	if err != nil {
		return nil, err
	}
	return newPort(c, reg), nil
}

func newPort(c Config, reg *region) *Port {
	mac, _ := net.ParseMAC(c.MAC)
	p := &Port{cfg: c, mac: mac, reg: reg, lay: reg.lay,
		tx: newRing(reg.mem, reg.lay, reg.side, wakeWord), rx: newRing(reg.mem, reg.lay, 1-reg.side, wakeWord),
		running: word(reg.mem, offSide+sideStride*reg.side), peerRunning: word(reg.mem, offSide+sideStride*(1-reg.side))}
	// Carry on from the indexes in the region (an attacher replacing
	// one that exited), and drop what a previous attacher left unread.
	p.txHead = p.tx.head.Load()
	p.rxTail = p.rx.head.Load()
	p.rx.tail.Store(p.rxTail)
	p.peerUp.Store(reg.peerAlive())
	return p
}

// Path returns the region's file.
func (p *Port) Path() string { return p.cfg.Path }

// Role returns this side's role.
func (p *Port) Role() Role { return p.cfg.Role }

// MTU returns the link's MTU (the creator's).
func (p *Port) MTU() int { return p.lay.mtu }

// Info implements hw.EthDev.
func (p *Port) Info() hw.DevInfo {
	return hw.DevInfo{DriverName: "net_shmlink", MaxRxQueues: 1, MaxTxQueues: 1,
		MaxRxDesc: p.lay.slots, MaxTxDesc: p.lay.slots, MinRxDesc: 1, MinTxDesc: 1,
		MaxFrameLen: p.lay.frameMax, SpeedMbps: 10000, TxOffloadCapa: hw.TxOffloadMultiSegs,
		MaxMACAddrs: 1, DefaultRxRing: p.lay.slots, DefaultTxRing: p.lay.slots}
}

// Configure implements hw.EthDev: one queue pair, no checksum offload,
// no RSS; chains are gathered into one slot.
func (p *Port) Configure(conf hw.PortConf) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.started.Load():
		return fmt.Errorf("shmlink %s configure: port is started", p.cfg.Path)
	case conf.RxQueues != 1 || conf.TxQueues != 1:
		return fmt.Errorf("shmlink %s configure: %d rx and %d tx queues; the link has one pair (run one lcore: --cores 1)", p.cfg.Path, conf.RxQueues, conf.TxQueues)
	case conf.MTU > p.lay.mtu:
		return fmt.Errorf("shmlink %s configure: mtu %d exceeds the link's %d", p.cfg.Path, conf.MTU, p.lay.mtu)
	case conf.RxOffloads != 0 || conf.TxOffloads&^hw.TxOffloadMultiSegs != 0:
		return fmt.Errorf("shmlink %s configure: no checksum offloads", p.cfg.Path)
	case conf.RSSHashTypes != 0:
		return fmt.Errorf("shmlink %s configure: %w", p.cfg.Path, ErrNoRSS)
	}
	p.configured = true
	return nil
}

// SetupRxQueue implements hw.EthDev: the ring's size is the region's,
// only the pool is used.
func (p *Port) SetupRxQueue(q int, nbDesc int, pool hw.Mempool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if q != 0 || !p.configured {
		return fmt.Errorf("shmlink %s rx queue %d: the port has one, set up after Configure", p.cfg.Path, q)
	}
	if pool == nil || pool.DataRoom() < hw.DefaultHeadroom+p.lay.frameMax {
		return fmt.Errorf("shmlink %s rx queue: the pool's data room must hold %d bytes after the headroom", p.cfg.Path, p.lay.frameMax)
	}
	p.pool = pool
	return nil
}

// SetupTxQueue implements hw.EthDev.
func (p *Port) SetupTxQueue(q int, nbDesc int) error {
	if q != 0 {
		return fmt.Errorf("shmlink %s tx queue %d: the port has one", p.cfg.Path, q)
	}
	return nil
}

// SetRxNotify registers fn, called when frames arrive on a ring this
// side had found empty (stack/rt's RxNotifier).
func (p *Port) SetRxNotify(q int, fn func()) error {
	if q != 0 {
		return fmt.Errorf("shmlink %s rx notify: queue %d: the port has one", p.cfg.Path, q)
	}
	p.notify.Store(&fn)
	return nil
}

// Start implements hw.EthDev: it raises this side's running flag and
// starts the doorbell watcher.
func (p *Port) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started.Load() {
		return nil
	}
	if p.pool == nil {
		return fmt.Errorf("shmlink %s start: rx queue 0 is not set up", p.cfg.Path)
	}
	p.running.Store(1)
	p.started.Store(true)
	p.stopW.Store(false)
	p.wg.Add(1)
	go p.watch()
	return nil
}

// watch waits on the rx doorbell and calls the notify function on every
// ring; between rings (at most checkEvery apart) it looks at the peer's
// lock.
func (p *Port) watch() {
	defer p.wg.Done()
	last := p.rx.bell.Load()
	checked := time.Now()
	for !p.stopW.Load() {
		if cur := p.rx.bell.Load(); cur != last {
			last = cur
			p.c.rxDoorbells.Add(1)
			if fn := p.notify.Load(); fn != nil {
				(*fn)()
			}
		} else {
			waitWord(p.rx.bell, cur, checkEvery)
		}
		if time.Since(checked) >= checkEvery {
			checked = time.Now()
			p.refreshPeer()
		}
	}
}

// refreshPeer looks at the peer's lock, counting a peer that went.
func (p *Port) refreshPeer() bool {
	alive := p.reg.peerAlive()
	if was := p.peerUp.Swap(alive); was && !alive {
		p.c.peerGone.Add(1)
	}
	return alive
}

// Stop implements hw.EthDev: the running flag drops (the peer's link
// goes down) and the watcher ends.
func (p *Port) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started.Swap(false) {
		return nil
	}
	p.running.Store(0)
	p.stopW.Store(true)
	// Ring our own doorbell so the watcher's wait ends now.
	p.rx.bell.Add(1)
	wakeWord(p.rx.bell)
	p.wg.Wait()
	return nil
}

// Close stops the port and unmaps the region; the creator removes the
// file.
func (p *Port) Close() error {
	_ = p.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reg != nil {
		p.reg.close()
		p.reg = nil
	}
	return nil
}

// up says whether frames can pass: both sides running, the peer alive.
func (p *Port) up() bool {
	return p.started.Load() && p.peerRunning.Load() == 1 && p.peerUp.Load()
}

// RxBurst implements hw.EthDev.
func (p *Port) RxBurst(q int, pkts []*hw.Mbuf) int {
	if q != 0 || !p.started.Load() || len(pkts) == 0 {
		return 0
	}
	n := p.rx.recv(&p.rxTail, pkts, p.pool, &p.c)
	for _, m := range pkts[:n] {
		m.Port = 0
	}
	return n
}

// TxBurst implements hw.EthDev. While the link is down frames are
// dropped and counted (tx_link_down), as a NIC without carrier drops
// them; a full ring takes fewer than offered (tx_ring_full).
func (p *Port) TxBurst(q int, pkts []*hw.Mbuf) int {
	if q != 0 {
		return 0
	}
	if !p.up() {
		for _, m := range pkts {
			m.Free()
		}
		p.c.txLinkDown.Add(uint64(len(pkts)))
		return len(pkts)
	}
	return p.tx.send(&p.txHead, pkts, &p.c)
}

// Stats implements hw.EthDev.
func (p *Port) Stats() hw.EthStats {
	c := &p.c
	s := hw.EthStats{IPackets: c.ipackets.Load(), IBytes: c.ibytes.Load(),
		OPackets: c.opackets.Load(), OBytes: c.obytes.Load(),
		IErrors:  c.badDesc.Load() + c.rxBadIndex.Load(),
		OErrors:  c.txBadLen.Load() + c.txLinkDown.Load() + c.txBadIndex.Load(),
		RxNoMbuf: c.rxNoMbuf.Load()}
	s.QIPackets, s.QIBytes, s.QOPackets, s.QOBytes = []uint64{s.IPackets}, []uint64{s.IBytes}, []uint64{s.OPackets}, []uint64{s.OBytes}
	s.QErrors = []uint64{0}
	return s
}

// XStats implements hw.EthDev: the basic counters and every drop by its
// cause.
func (p *Port) XStats() []hw.XStat {
	s, c := p.Stats(), &p.c
	return []hw.XStat{
		{Name: "rx_good_packets", Value: s.IPackets}, {Name: "tx_good_packets", Value: s.OPackets},
		{Name: "rx_good_bytes", Value: s.IBytes}, {Name: "tx_good_bytes", Value: s.OBytes},
		{Name: "rx_errors", Value: s.IErrors}, {Name: "tx_errors", Value: s.OErrors},
		{Name: "rx_mbuf_allocation_errors", Value: s.RxNoMbuf},
		{Name: "rx_bad_descriptors", Value: c.badDesc.Load()},
		{Name: "rx_bad_ring_index", Value: c.rxBadIndex.Load()},
		{Name: "tx_bad_ring_index", Value: c.txBadIndex.Load()},
		{Name: "tx_ring_full", Value: c.txFull.Load()},
		{Name: "tx_bad_length", Value: c.txBadLen.Load()},
		{Name: "tx_link_down", Value: c.txLinkDown.Load()},
		{Name: "tx_doorbells", Value: c.txDoorbells.Load()},
		{Name: "rx_doorbells", Value: c.rxDoorbells.Load()},
		{Name: "peer_gone", Value: c.peerGone.Load()},
	}
}

// ResetStats implements hw.EthDev.
func (p *Port) ResetStats() {
	c := &p.c
	for _, x := range []*atomic.Uint64{&c.ipackets, &c.ibytes, &c.opackets, &c.obytes, &c.rxNoMbuf, &c.badDesc,
		&c.rxBadIndex, &c.txBadIndex, &c.txFull, &c.txBadLen, &c.txLinkDown, &c.txDoorbells, &c.rxDoorbells, &c.peerGone} {
		x.Store(0)
	}
}

// MACAddr implements hw.EthDev.
func (p *Port) MACAddr() net.HardwareAddr { return append(net.HardwareAddr(nil), p.mac...) }

// Link implements hw.EthDev: up while both sides run and the peer is
// alive. A link that is down looks at the peer's lock at once, so that
// a peer that just attached is seen without waiting for the watcher.
func (p *Port) Link() hw.LinkStatus {
	if !p.up() && p.started.Load() {
		p.refreshPeer()
	}
	return hw.LinkStatus{Up: p.up(), SpeedMbps: 10000, FullDuplex: true}
}

// RETA implements hw.EthDev: none (nil).
func (p *Port) RETA() []uint16 { return nil }

// SetRETA implements hw.EthDev: always ErrNoRSS.
func (p *Port) SetRETA([]uint16) error { return fmt.Errorf("shmlink %s: %w", p.cfg.Path, ErrNoRSS) }

// RSSKey implements hw.EthDev: none (nil).
func (p *Port) RSSKey() []byte { return nil }

var _ hw.EthDev = (*Port)(nil)
