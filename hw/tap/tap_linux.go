//go:build linux

package tap

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/savanna-sim/savanna/hw"
)

// Linux constants (include/uapi/linux/if_tun.h, if.h, sockios.h).
const (
	tunSetIff     = 0x400454ca
	iffTap        = 0x0002
	iffNoPI       = 0x1000
	iffMultiQueue = 0x0100
	siocGIFFlags  = 0x8913
	siocSIFFlags  = 0x8914
	iffUp         = 0x1
)

type queue struct {
	f      *os.File
	fd     int
	pool   hw.Mempool
	spare  *hw.Mbuf
	notify atomic.Pointer[func()]
	stop   atomic.Bool

	ipackets, ibytes, ierrors, nombuf atomic.Uint64
	opackets, obytes, oerrors         atomic.Uint64
	scratch                           []byte

	// Impairments (Config.RxLoss, RxReorder), lcore-owned.
	rng                  *rand.Rand
	held                 *hw.Mbuf
	impDrops, impReorder atomic.Uint64
}

// Dev is a TAP port.
type Dev struct {
	cfg     Config
	mac     net.HardwareAddr
	mu      sync.Mutex
	queues  []*queue
	nq      int
	started atomic.Bool
	wg      sync.WaitGroup
}

// Open creates (or attaches to) the TAP interface and opens its first
// queue.
func Open(cfg Config) (*Dev, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("tap: %w", err)
	}
	if cfg.MAC == "" {
		cfg.MAC = "02:53:56:00:00:02"
	}
	if cfg.MTU == 0 {
		cfg.MTU = 1500
	}
	mac, _ := net.ParseMAC(cfg.MAC)
	d := &Dev{cfg: cfg, mac: mac}
	q, err := d.openQueue()
	if err != nil {
		return nil, err
	}
	d.queues = []*queue{q}
	d.nq = 1
	return d, nil
}

type ifreq struct {
	name  [16]byte
	flags uint16
	_     [22]byte
}

func (d *Dev) openQueue() (*queue, error) {
	fd, err := syscall.Open("/dev/net/tun", syscall.O_RDWR|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("tap %s: open /dev/net/tun: %w", d.cfg.Name, err)
	}
	var req ifreq
	copy(req.name[:], d.cfg.Name)
	req.flags = iffTap | iffNoPI | iffMultiQueue
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), tunSetIff, uintptr(unsafe.Pointer(&req))); e != 0 {
		syscall.Close(fd)
		return nil, fmt.Errorf("tap %s: TUNSETIFF: %w", d.cfg.Name, e)
	}
	f := os.NewFile(uintptr(fd), "tap:"+d.cfg.Name)
	return &queue{f: f, fd: fd, scratch: make([]byte, d.cfg.MTU+14),
		rng: rand.New(rand.NewPCG(d.cfg.Seed, uint64(len(d.queues))))}, nil
}

// setUp sets IFF_UP on the kernel side (SIOCSIFFLAGS).
func (d *Dev) setUp() error {
	s, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("tap %s: socket: %w", d.cfg.Name, err)
	}
	defer syscall.Close(s)
	var req ifreq
	copy(req.name[:], d.cfg.Name)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(s), siocGIFFlags, uintptr(unsafe.Pointer(&req))); e != 0 {
		return fmt.Errorf("tap %s: SIOCGIFFLAGS: %w", d.cfg.Name, e)
	}
	req.flags |= iffUp
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(s), siocSIFFlags, uintptr(unsafe.Pointer(&req))); e != 0 {
		return fmt.Errorf("tap %s: SIOCSIFFLAGS: %w", d.cfg.Name, e)
	}
	return nil
}

// Name returns the interface name.
func (d *Dev) Name() string { return d.cfg.Name }

// Info implements hw.EthDev.
func (d *Dev) Info() hw.DevInfo {
	return hw.DevInfo{DriverName: "net_tap", MaxRxQueues: MaxQueues, MaxTxQueues: MaxQueues,
		MaxRxDesc: 1 << 16, MaxTxDesc: 1 << 16, MinRxDesc: 1, MinTxDesc: 1,
		MaxFrameLen: d.cfg.MTU + 14, SpeedMbps: 10000, MaxMACAddrs: 1,
		DefaultRxRing: 1024, DefaultTxRing: 1024}
}

// Configure implements hw.EthDev: it opens one descriptor per queue.
// Rx and tx queue q share descriptor q, so the counts must match.
func (d *Dev) Configure(conf hw.PortConf) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started.Load() {
		return fmt.Errorf("tap %s configure: port is started", d.cfg.Name)
	}
	if conf.RxQueues < 1 || conf.RxQueues > MaxQueues || conf.TxQueues != conf.RxQueues {
		return fmt.Errorf("tap %s configure: %d rx and %d tx queues; want equal counts in 1..%d", d.cfg.Name, conf.RxQueues, conf.TxQueues, MaxQueues)
	}
	if conf.MTU > d.cfg.MTU {
		return fmt.Errorf("tap %s configure: mtu %d exceeds the port's %d", d.cfg.Name, conf.MTU, d.cfg.MTU)
	}
	if conf.RxOffloads != 0 || conf.TxOffloads != 0 {
		return fmt.Errorf("tap %s configure: no checksum offloads (the TAP is opened without a virtio-net header)", d.cfg.Name)
	}
	if conf.RSSHashTypes != 0 {
		return fmt.Errorf("tap %s configure: %w", d.cfg.Name, ErrNoRSS)
	}
	for len(d.queues) < conf.RxQueues {
		q, err := d.openQueue()
		if err != nil {
			return err
		}
		d.queues = append(d.queues, q)
	}
	d.nq = conf.RxQueues
	return nil
}

// SetupRxQueue implements hw.EthDev; the descriptor count is the
// kernel's business (txqueuelen), only the pool is used.
func (d *Dev) SetupRxQueue(q int, nbDesc int, pool hw.Mempool) error {
	if q < 0 || q >= d.nq {
		return fmt.Errorf("tap %s rx queue %d: the port has %d", d.cfg.Name, q, d.nq)
	}
	if pool == nil || pool.DataRoom() < hw.DefaultHeadroom+d.cfg.MTU+14 {
		return fmt.Errorf("tap %s rx queue %d: the pool's data room must hold %d bytes after the headroom", d.cfg.Name, q, d.cfg.MTU+14)
	}
	d.queues[q].pool = pool
	return nil
}

// SetupTxQueue implements hw.EthDev.
func (d *Dev) SetupTxQueue(q int, nbDesc int) error {
	if q < 0 || q >= d.nq {
		return fmt.Errorf("tap %s tx queue %d: the port has %d", d.cfg.Name, q, d.nq)
	}
	return nil
}

// Start implements hw.EthDev: it starts the readability watchers and, with
// Config.Up, brings the interface up.
func (d *Dev) Start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started.Load() {
		return nil
	}
	for i, q := range d.queues[:d.nq] {
		if q.pool == nil {
			return fmt.Errorf("tap %s start: rx queue %d is not set up", d.cfg.Name, i)
		}
	}
	if d.cfg.Up {
		if err := d.setUp(); err != nil {
			return err
		}
	}
	d.started.Store(true)
	for _, q := range d.queues[:d.nq] {
		d.wg.Add(1)
		go d.watch(q)
	}
	return nil
}

// watch waits for the queue's descriptor to become readable and calls the
// notify function, through Go's poller (edge-triggered: one wake per
// arrival burst, none lost while nobody waits).
func (d *Dev) watch(q *queue) {
	defer d.wg.Done()
	rc, err := q.f.SyscallConn()
	if err != nil {
		return
	}
	// RawRead resets the poller's readiness before calling f, so f
	// notifies on every call: a frame that arrived before the reset is
	// covered by the first call's notification, a later one by the edge
	// that ends the wait.
	notify := func() {
		if fn := q.notify.Load(); fn != nil {
			(*fn)()
		}
	}
	for !q.stop.Load() {
		first := true
		err := rc.Read(func(uintptr) bool {
			notify()
			if first {
				first = false
				return false
			}
			return true
		})
		if err != nil || q.stop.Load() {
			return
		}
	}
}

// SetRxNotify registers fn, called when queue q has frames to read.
func (d *Dev) SetRxNotify(q int, fn func()) error {
	if q < 0 || q >= d.nq {
		return fmt.Errorf("tap %s rx notify: queue %d: the port has %d", d.cfg.Name, q, d.nq)
	}
	d.queues[q].notify.Store(&fn)
	return nil
}

// Stop implements hw.EthDev; the descriptors stay open until Close.
func (d *Dev) Stop() error {
	d.started.Store(false)
	return nil
}

// Close stops the port and closes its descriptors (the interface goes
// away unless it was made persistent elsewhere).
func (d *Dev) Close() error {
	d.started.Store(false)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, q := range d.queues {
		q.stop.Store(true)
		_ = q.f.Close()
		if q.spare != nil {
			q.spare.Free()
			q.spare = nil
		}
		if q.held != nil {
			q.held.Free()
			q.held = nil
		}
	}
	d.wg.Wait()
	return nil
}

// RxBurst implements hw.EthDev: one non-blocking read(2) per frame.
func (d *Dev) RxBurst(qi int, pkts []*hw.Mbuf) int {
	if !d.started.Load() || qi < 0 || qi >= d.nq {
		return 0
	}
	q := d.queues[qi]
	n := 0
	for n < len(pkts) {
		m := q.spare
		q.spare = nil
		if m == nil {
			if m = q.pool.Get(); m == nil {
				q.nombuf.Add(1)
				break
			}
		}
		room := m.Buf[m.DataOff:]
		r, err := syscall.Read(q.fd, room)
		if err != nil || r <= 0 {
			q.spare = m
			if err != nil && err != syscall.EAGAIN && err != syscall.EINTR {
				q.ierrors.Add(1)
			}
			break
		}
		if r < 14 || r == len(room) && r > d.cfg.MTU+14 {
			q.ierrors.Add(1) // runt or truncated
			q.spare = m
			continue
		}
		m.DataLen, m.PktLen = r, r
		m.Queue = uint16(qi)
		q.ipackets.Add(1)
		q.ibytes.Add(uint64(r))
		if d.cfg.RxLoss > 0 || d.cfg.RxReorder > 0 {
			switch x := q.rng.Float64(); {
			case x < d.cfg.RxLoss:
				q.impDrops.Add(1)
				m.Free()
				continue
			case x < d.cfg.RxLoss+d.cfg.RxReorder && q.held == nil:
				q.held = m
				q.impReorder.Add(1)
				continue
			}
		}
		pkts[n] = m
		n++
		if q.held != nil && n < len(pkts) {
			pkts[n], q.held = q.held, nil
			n++
		}
	}
	if q.held != nil && n < len(pkts) && n == 0 {
		// Nothing followed the held frame this time: let it go.
		pkts[n], q.held = q.held, nil
		n++
	}
	return n
}

// TxBurst implements hw.EthDev: one write(2) per frame. A full kernel
// queue (EAGAIN) ends the burst, the caller keeps the rest as with a full
// tx ring; other failures (interface down) drop the frame as oerrors.
func (d *Dev) TxBurst(qi int, pkts []*hw.Mbuf) int {
	if qi < 0 || qi >= d.nq {
		return 0
	}
	q := d.queues[qi]
	for i, m := range pkts {
		if !d.started.Load() || m.PktLen > d.cfg.MTU+14 {
			q.oerrors.Add(1)
			m.Free()
			continue
		}
		b := m.Data()
		if m.Next != nil {
			b = m.Bytes(q.scratch[:0])
		}
		_, err := syscall.Write(q.fd, b)
		if err == syscall.EAGAIN {
			return i
		}
		if err != nil {
			q.oerrors.Add(1)
		} else {
			q.opackets.Add(1)
			q.obytes.Add(uint64(len(b)))
		}
		m.Free()
	}
	return len(pkts)
}

// Stats implements hw.EthDev.
func (d *Dev) Stats() hw.EthStats {
	var s hw.EthStats
	n := max(1, d.nq)
	s.QIPackets, s.QIBytes, s.QErrors = make([]uint64, n), make([]uint64, n), make([]uint64, n)
	s.QOPackets, s.QOBytes = make([]uint64, n), make([]uint64, n)
	for i, q := range d.queues[:n] {
		s.QIPackets[i], s.QIBytes[i] = q.ipackets.Load(), q.ibytes.Load()
		s.QOPackets[i], s.QOBytes[i] = q.opackets.Load(), q.obytes.Load()
		s.IPackets += s.QIPackets[i]
		s.IBytes += s.QIBytes[i]
		s.OPackets += s.QOPackets[i]
		s.OBytes += s.QOBytes[i]
		s.IErrors += q.ierrors.Load()
		s.OErrors += q.oerrors.Load()
		s.RxNoMbuf += q.nombuf.Load()
	}
	return s
}

// XStats implements hw.EthDev.
func (d *Dev) XStats() []hw.XStat {
	s := d.Stats()
	return []hw.XStat{
		{Name: "rx_good_packets", Value: s.IPackets}, {Name: "tx_good_packets", Value: s.OPackets},
		{Name: "rx_good_bytes", Value: s.IBytes}, {Name: "tx_good_bytes", Value: s.OBytes},
		{Name: "rx_errors", Value: s.IErrors}, {Name: "tx_errors", Value: s.OErrors},
		{Name: "rx_mbuf_allocation_errors", Value: s.RxNoMbuf},
		{Name: "impair_rx_dropped", Value: d.sum(func(q *queue) uint64 { return q.impDrops.Load() })},
		{Name: "impair_rx_reordered", Value: d.sum(func(q *queue) uint64 { return q.impReorder.Load() })},
	}
}

func (d *Dev) sum(f func(*queue) uint64) uint64 {
	var t uint64
	for _, q := range d.queues {
		t += f(q)
	}
	return t
}

// ResetStats implements hw.EthDev.
func (d *Dev) ResetStats() {
	for _, q := range d.queues {
		for _, c := range []*atomic.Uint64{&q.ipackets, &q.ibytes, &q.ierrors, &q.nombuf, &q.opackets, &q.obytes, &q.oerrors} {
			c.Store(0)
		}
	}
}

// MACAddr implements hw.EthDev.
func (d *Dev) MACAddr() net.HardwareAddr { return append(net.HardwareAddr(nil), d.mac...) }

// Link implements hw.EthDev: up while started.
func (d *Dev) Link() hw.LinkStatus {
	return hw.LinkStatus{Up: d.started.Load(), SpeedMbps: 10000, FullDuplex: true}
}

// RETA implements hw.EthDev: a TAP has none (nil).
func (d *Dev) RETA() []uint16 { return nil }

// SetRETA implements hw.EthDev: always ErrNoRSS.
func (d *Dev) SetRETA([]uint16) error { return fmt.Errorf("tap %s: %w", d.cfg.Name, ErrNoRSS) }

// RSSKey implements hw.EthDev: a TAP has none (nil).
func (d *Dev) RSSKey() []byte { return nil }

var _ hw.EthDev = (*Dev)(nil)
