package iface_test

import (
	"encoding/binary"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// pool is a minimal hw.Mempool for tests.
type pool struct {
	free  []*hw.Mbuf
	size  int
	gets  uint64
	fails uint64
}

func newPool(n, room int) *pool {
	p := &pool{size: n}
	for range n {
		m := &hw.Mbuf{Buf: make([]byte, room), Pool: p}
		p.free = append(p.free, m)
	}
	return p
}

func (p *pool) Name() string  { return "test" }
func (p *pool) NUMANode() int { return 0 }
func (p *pool) DataRoom() int { return 2048 }
func (p *pool) Get() *hw.Mbuf {
	if len(p.free) == 0 {
		p.fails++
		return nil
	}
	m := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	m.Reset()
	m.RefCnt = 1
	p.gets++
	return m
}
func (p *pool) GetBulk(ms []*hw.Mbuf) bool {
	if len(p.free) < len(ms) {
		return false
	}
	for i := range ms {
		ms[i] = p.Get()
	}
	return true
}
func (p *pool) Put(m *hw.Mbuf) { p.free = append(p.free, m) }
func (p *pool) Stats() hw.MempoolStats {
	return hw.MempoolStats{Size: p.size, Available: len(p.free), InUse: p.size - len(p.free), Gets: p.gets, FailedGets: p.fails}
}

// link is a fake Link: it allocates from its pool and collects frames.
type link struct {
	pool *pool
	out  []*hw.Mbuf
	off  hw.TxOffloads
	// dead makes Alloc fail.
	dead bool
	// mcast is the multicast filter the interface loaded.
	mcast []ether.Addr
}

func (l *link) SetMulticastMACs(macs []ether.Addr) { l.mcast = append(l.mcast[:0], macs...) }

func (l *link) Alloc() *hw.Mbuf {
	if l.dead {
		return nil
	}
	return l.pool.Get()
}
func (l *link) Transmit(m *hw.Mbuf)       { l.out = append(l.out, m) }
func (l *link) TxOffloads() hw.TxOffloads { return l.off }

// take returns copies of the frames sent so far and frees the mbufs,
// applying the tx offloads a NIC would (checksums).
func (l *link) take() [][]byte {
	var frames [][]byte
	for _, m := range l.out {
		nicTxOffload(m)
		frames = append(frames, m.Bytes(nil))
		m.Free()
	}
	l.out = l.out[:0]
	return frames
}

// nicTxOffload does what a NIC does with RTE_MBUF_F_TX_*_CKSUM.
func nicTxOffload(m *hw.Mbuf) {
	d := m.Data()
	l2, l3 := int(m.L2Len), int(m.L3Len)
	if m.Flags&hw.TxIPChecksum != 0 {
		p := ipv4.Packet(d[l2:])
		p.FillChecksum()
	}
	if m.Flags&(hw.TxTCPChecksum|hw.TxUDPChecksum) != 0 {
		p := ipv4.Packet(d[l2:])
		seg := d[l2+l3 : l2+int(p.TotalLen())]
		off := 16
		if m.Flags&hw.TxUDPChecksum != 0 {
			off = 6
		}
		// The field holds the pseudo-header sum: summing the segment as
		// is and complementing gives the checksum.
		v := checksum.Checksum(seg)
		if v == 0 && off == 6 {
			v = 0xffff
		}
		binary.BigEndian.PutUint16(seg[off:], v)
	}
}

var (
	macA = ether.Addr{0x02, 0, 0, 0, 0, 0x0a}
	macB = ether.Addr{0x02, 0, 0, 0, 0, 0x0b}
	ipA  = [4]byte{10, 0, 0, 1}
	ipB  = [4]byte{10, 0, 0, 2}
)

// node is one interface with its link and pool.
type node struct {
	ifc  *iface.Interface
	link *link
	pool *pool
	// rxFlags are set on every mbuf delivered to this node (a NIC's rx
	// checksum offload).
	rxFlags hw.OffloadFlags
}

func newNode(cfg iface.Config) *node { return newNodeRoom(cfg, 2048) }

func newNodeRoom(cfg iface.Config, room int) *node {
	p := newPool(256, room)
	l := &link{pool: p}
	ifc, err := iface.New(cfg, l)
	if err != nil {
		panic(err)
	}
	return &node{ifc: ifc, link: l, pool: p}
}

func cfgA() iface.Config {
	return iface.Config{Address: "10.0.0.1/24", MAC: macA.String()}
}

func cfgB() iface.Config {
	return iface.Config{Address: "10.0.0.2/24", MAC: macB.String()}
}

// deliver copies frame into an mbuf of n's pool and inputs it.
func (n *node) deliver(now time.Duration, frame []byte) {
	m := n.pool.Get()
	if m == nil {
		panic("test pool empty")
	}
	if err := m.SetData(frame); err != nil {
		panic(err)
	}
	m.Flags = n.rxFlags
	n.ifc.Input(now, m)
}

// wire joins two nodes: pump moves frames both ways until none is left,
// recording every frame.
type wire struct {
	a, b   *node
	frames [][]byte // everything that crossed, in order
	// drop, if set, decides to lose a frame.
	drop func(frame []byte) bool
}

func (w *wire) pump(now time.Duration) {
	for range 1000 {
		fa, fb := w.a.link.take(), w.b.link.take()
		if len(fa) == 0 && len(fb) == 0 {
			return
		}
		for _, f := range fa {
			w.frames = append(w.frames, f)
			if w.drop == nil || !w.drop(f) {
				w.b.deliver(now, f)
			}
		}
		for _, f := range fb {
			w.frames = append(w.frames, f)
			if w.drop == nil || !w.drop(f) {
				w.a.deliver(now, f)
			}
		}
	}
	panic("wire did not settle")
}

// frame builds an Ethernet frame around an IPv4 datagram.
func frame(dst, src ether.Addr, ip []byte) []byte {
	b := make([]byte, ether.HeaderLen+len(ip))
	ether.Repr{Dst: dst, Src: src, EtherType: ether.TypeIPv4}.Emit(ether.Frame(b))
	copy(b[ether.HeaderLen:], ip)
	return b
}

// datagram builds an IPv4 datagram with a checksummed header.
func datagram(src, dst [4]byte, proto ipv4.Protocol, payload []byte) []byte {
	b := make([]byte, ipv4.MinHeaderLen+len(payload))
	ipv4.Repr{Src: src, Dst: dst, Protocol: proto, TTL: 64, PayloadLen: len(payload), Ident: 77}.Emit(ipv4.Packet(b), true)
	copy(b[ipv4.MinHeaderLen:], payload)
	return b
}

const hwRxGood = hw.RxIPChecksumGood | hw.RxL4ChecksumGood

func hwTxAll() hw.TxOffloads {
	return hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum | hw.TxOffloadUDPChecksum
}

const hwL4Bad = hw.RxIPChecksumGood | hw.RxL4ChecksumBad
