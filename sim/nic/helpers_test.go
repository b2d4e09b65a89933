package nic_test

import (
	"encoding/binary"
	"fmt"
	"net"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
)

// testMem is a test-only hw.HugeMemory: a page budget per node, no bytes.
type testMem struct {
	freePages map[int]int64
	regions   int
}

func newTestMem(pagesPerNode int64, nodes int) *testMem {
	m := &testMem{freePages: map[int]int64{}}
	for n := 0; n < nodes; n++ {
		m.freePages[n] = pagesPerNode
	}
	return m
}

func (m *testMem) Alloc(req hw.AllocRequest) (*hw.Region, error) {
	free, ok := m.freePages[req.Node]
	if !ok {
		return nil, fmt.Errorf("node %d: no such node", req.Node)
	}
	pages := (req.Size + req.PageSize - 1) / req.PageSize
	if pages > free {
		return nil, fmt.Errorf("node %d: %d pages wanted, %d free: %w", req.Node, pages, free, hw.ErrNoHugepages)
	}
	m.freePages[req.Node] -= pages
	m.regions++
	return &hw.Region{Node: req.Node, Size: req.Size, PageSize: req.PageSize, Pages: pages, Owner: req.Owner}, nil
}

func (m *testMem) Free(r *hw.Region) error {
	m.freePages[r.Node] += r.Pages
	m.regions--
	return nil
}

func (m *testMem) NodeOf(cpu int) int { return 0 }

// portOpts describes a test port.
type portOpts struct {
	model      string
	rxq, txq   int
	rxRing     int
	txRing     int
	mbufs      int
	rss        hw.RSSHashType
	rxOffloads hw.RxOffloads
	txOffloads hw.TxOffloads
}

func defaultOpts() portOpts {
	return portOpts{model: "hi1822-25g", rxq: 1, txq: 1, rxRing: 1024, txRing: 1024, mbufs: 2048}
}

// newPort makes, configures and starts a port with a pool per rx queue
// plus a tx pool the test allocates from (returned).
func newPort(eng *sim.Engine, mem hw.HugeMemory, id uint16, name string, o portOpts) (*nic.Port, *nic.Mempool) {
	p, err := nic.NewPort(eng, id, nic.PortConfig{Name: name, Model: o.model})
	must(err)
	must(p.Configure(hw.PortConf{RxQueues: o.rxq, TxQueues: o.txq, RSSHashTypes: o.rss, RxOffloads: o.rxOffloads, TxOffloads: o.txOffloads}))
	for q := 0; q < o.rxq; q++ {
		pool, err := nic.NewMempool(fmt.Sprintf("%s-rx%d", name, q), o.mbufs, nic.DefaultMbufSize, 0, mem)
		must(err)
		must(p.SetupRxQueue(q, o.rxRing, pool))
	}
	for q := 0; q < o.txq; q++ {
		must(p.SetupTxQueue(q, o.txRing))
	}
	must(p.Start())
	tx, err := nic.NewMempool(name+"-tx", o.mbufs, nic.DefaultMbufSize, 0, mem)
	must(err)
	return p, tx
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// flow names a UDP or TCP flow for frame building.
type flow struct {
	src, dst         net.IP
	sport, dport     uint16
	tcp              bool
	payload          int
	srcMAC, dstMAC   net.HardwareAddr
	badIP, badL4     bool
	ipv6             bool
	seq              uint32 // written at the start of the payload
	zeroL4, noChecks bool
}

var (
	macA = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xa}
	macB = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xb}
)

// buildFrame serializes an Ethernet frame with correct checksums (unless
// asked otherwise), without FCS.
func buildFrame(f flow) []byte {
	src, dst := f.srcMAC, f.dstMAC
	if src == nil {
		src = macA
	}
	if dst == nil {
		dst = macB
	}
	payload := make([]byte, f.payload)
	if len(payload) >= 4 {
		binary.BigEndian.PutUint32(payload, f.seq)
	}
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: layers.EthernetTypeIPv4}
	var net gopacket.NetworkLayer
	var ip4 *layers.IPv4
	var ip6 *layers.IPv6
	proto := layers.IPProtocolUDP
	if f.tcp {
		proto = layers.IPProtocolTCP
	}
	if f.ipv6 {
		eth.EthernetType = layers.EthernetTypeIPv6
		ip6 = &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: proto, SrcIP: f.src, DstIP: f.dst}
		net = ip6
	} else {
		ip4 = &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: proto, SrcIP: f.src.To4(), DstIP: f.dst.To4()}
		net = ip4
	}
	var l4 gopacket.SerializableLayer
	if f.tcp {
		t := &layers.TCP{SrcPort: layers.TCPPort(f.sport), DstPort: layers.TCPPort(f.dport), Seq: 1, Window: 65535, ACK: true, Ack: 1}
		_ = t.SetNetworkLayerForChecksum(net)
		l4 = t
	} else {
		u := &layers.UDP{SrcPort: layers.UDPPort(f.sport), DstPort: layers.UDPPort(f.dport)}
		_ = u.SetNetworkLayerForChecksum(net)
		l4 = u
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: !f.noChecks}
	var ipLayer gopacket.SerializableLayer = ip4
	if f.ipv6 {
		ipLayer = ip6
	}
	must(gopacket.SerializeLayers(buf, opts, eth, ipLayer, l4, gopacket.Payload(payload)))
	b := append([]byte(nil), buf.Bytes()...)
	l4off := 14 + 20
	if f.ipv6 {
		l4off = 14 + 40
	}
	if f.badIP && !f.ipv6 {
		b[14+10] ^= 0xff
	}
	if f.badL4 {
		if f.tcp {
			b[l4off+16] ^= 0xff
		} else {
			b[l4off+6] ^= 0xff
		}
	}
	if f.zeroL4 && !f.tcp {
		b[l4off+6], b[l4off+7] = 0, 0
	}
	return b
}

// udpFrame returns a UDP/IPv4 frame of total size bytes (FCS included,
// as frame sizes are quoted) carrying seq.
func udpFrame(size int, seq uint32) []byte {
	return buildFrame(flow{src: net.IPv4(10, 0, 0, 1), dst: net.IPv4(10, 0, 0, 2), sport: 1000, dport: 2000,
		payload: size - 4 - 14 - 20 - 8, seq: seq})
}

// mbufOf takes an mbuf from pool holding data.
func mbufOf(pool *nic.Mempool, data []byte) *hw.Mbuf {
	m := pool.Get()
	if m == nil {
		panic("test pool empty")
	}
	must(m.SetData(data))
	return m
}

// sink is a Poller that drains an rx queue, recording what it got.
type sink struct {
	port   *nic.Port
	q      int
	buf    [64]*hw.Mbuf
	got    int
	first  int64
	last   int64
	seqs   []uint32
	flags  []hw.OffloadFlags
	keep   bool
	frames [][]byte
}

func (s *sink) Poll(m hw.Meter) (bool, time.Duration) {
	n := s.port.RxBurst(s.q, s.buf[:])
	for _, mb := range s.buf[:n] {
		if s.got == 0 {
			s.first = mb.Timestamp
		}
		s.last = mb.Timestamp
		s.got++
		d := mb.Data()
		if len(d) >= 46 {
			s.seqs = append(s.seqs, binary.BigEndian.Uint32(d[42:46]))
		}
		s.flags = append(s.flags, mb.Flags)
		if s.keep {
			s.frames = append(s.frames, append([]byte(nil), d...))
		}
		mb.Free()
	}
	return n > 0, sim.Never
}

// source is a Poller that sends frames from a list as fast as the tx ring
// takes them, keeping those refused for the next turn.
type source struct {
	port    *nic.Port
	pool    *nic.Mempool
	q       int
	frames  func(i int) []byte
	total   int
	sent    int
	retry   time.Duration
	pending []*hw.Mbuf
	built   int
}

func (s *source) Poll(m hw.Meter) (bool, time.Duration) {
	if s.sent >= s.total {
		return false, sim.Never
	}
	for len(s.pending) < 32 && s.built < s.total {
		s.pending = append(s.pending, mbufOf(s.pool, s.frames(s.built)))
		s.built++
	}
	n := s.port.TxBurst(s.q, s.pending)
	s.pending = append(s.pending[:0], s.pending[n:]...)
	s.sent += n
	if s.sent >= s.total {
		return n > 0, sim.Never
	}
	return n > 0, m.Now() + s.retry
}

// zeroPrices is a cost model where everything is free, so that tests of
// the wire see only the wire.
func zeroCore(eng *sim.Engine, id int) *sim.Core {
	return sim.NewCore(eng, id, 0, &sim.Prices{}, false)
}

func newEngineForFuzz() *sim.Engine { return sim.NewEngine(1) }
