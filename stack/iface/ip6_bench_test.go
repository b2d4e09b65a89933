package iface_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

// The IPv6 counterparts of BenchmarkOutputTCPOffload and
// BenchmarkInputTCP (with the NIC's checksum verdict), so that the
// per-packet cost of each family's path can be compared (bench/'s
// IPv6/IPv4 goal at MTU 1500 is paid per packet: see bench/PROFILE.md).
// Run both families together:
//
//	go test ./stack/iface -run '^$' -bench 'TCP(6)?Offload|InputTCP(6)?Good' -count 5

// outputNode6 is an IPv6-only interface at fd00::2 with fd00::1
// resolved (REACHABLE after a confirmation) and addresses assigned at
// once (no DAD), tx offloads off.
func outputNode6(off hw.TxOffloads) *node {
	nd := ndp.DefaultConfig()
	nd.DupAddrDetectTransmits, nd.MaxRtrSolicitations, nd.MaxRtrSolicitationDelay = 0, 0, 0
	n := newNodeOff(iface.Config{MAC: macB.String(), IPv6: iface.IPv6Config{Address: "fd00::2/64", ND: nd, NDSet: true}}, off)
	n.ifc.Start(0)
	n.ifc.Poll(0)
	n.ifc.AddNeighbor6(0, ip6A, macA)
	n.ifc.Confirm6(0, ip6A)
	n.drainOut()
	return n
}

// newNodeOff is newNode with the link's tx offloads set before the
// interface reads them (New does, once).
func newNodeOff(cfg iface.Config, off hw.TxOffloads) *node {
	p := newPool(256, 2048)
	l := &link{pool: p, off: off}
	ifc, err := iface.New(cfg, l)
	if err != nil {
		panic(err)
	}
	return &node{ifc: ifc, link: l, pool: p}
}

// BenchmarkOutputTCP4NICSum is BenchmarkOutputTCPOffload with the
// offload in force (the interface reads the link's offloads when it is
// made, so outputNode's are not), the counterpart of
// BenchmarkOutputTCP6Offload.
func BenchmarkOutputTCP4NICSum(b *testing.B) {
	n := newNodeOff(cfgB(), hwTxAll())
	n.ifc.AddNeighbor(0, ipA, macA)
	data := make([]byte, 1448)
	b.ReportAllocs()
	b.SetBytes(int64(20 + len(data)))
	for b.Loop() {
		m := n.ifc.AllocTransport()
		seg, _ := m.Append(20 + len(data))
		seg[12] = 5 << 4
		copy(seg[20:], data)
		if err := n.ifc.OutputIPv4(0, m, ipA, ipv4.ProtoTCP, iface.OutputOptions{DontFrag: true, Checksum: iface.ChecksumTCP}); err != nil {
			b.Fatal(err)
		}
		n.drainOut()
	}
}

// BenchmarkOutputTCP6Offload is BenchmarkOutputTCPOffload over IPv6,
// with the 20 bytes fewer a segment carries at MTU 1500.
func BenchmarkOutputTCP6Offload(b *testing.B) {
	n := outputNode6(hwTxAll())
	data := make([]byte, 1428)
	b.ReportAllocs()
	b.SetBytes(int64(20 + len(data)))
	for b.Loop() {
		m := n.ifc.AllocTransport6()
		seg, _ := m.Append(20 + len(data))
		seg[12] = 5 << 4
		copy(seg[20:], data)
		if err := n.ifc.OutputIPv6(time.Millisecond, m, ip6A, ipv6.NextTCP, iface.OutputOptions6{FlowLabel: 7, Checksum: iface.ChecksumTCP}); err != nil {
			b.Fatal(err)
		}
		n.drainOut()
	}
}

// BenchmarkInputTCPGood is BenchmarkInputTCP with the NIC's verdict
// (RTE_MBUF_F_RX_L4_CKSUM_GOOD), as on the bench's link.
func BenchmarkInputTCPGood(b *testing.B) {
	n := newNode(cfgB())
	n.rxFlags = hwRxGood
	delivered := 0
	_ = n.ifc.RegisterTransport(ipv4.ProtoTCP, iface.HandlerFunc(func(time.Duration, iface.Segment) { delivered++ }))
	seg := make([]byte, 20+1448)
	seg[12] = 5 << 4
	f := frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoTCP, seg))
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		m := n.pool.Get()
		_ = m.SetData(f)
		m.Flags = n.rxFlags
		n.ifc.Input(0, m)
	}
	if delivered == 0 {
		b.Fatal("nothing delivered")
	}
}

// BenchmarkInputTCP6Good is BenchmarkInputTCPGood over IPv6.
func BenchmarkInputTCP6Good(b *testing.B) {
	n := outputNode6(0)
	n.rxFlags = hwRxGood
	delivered := 0
	_ = n.ifc.RegisterTransport(ipv4.ProtoTCP, iface.HandlerFunc(func(time.Duration, iface.Segment) { delivered++ }))
	seg := make([]byte, 20+1428)
	seg[12] = 5 << 4
	binary.BigEndian.PutUint16(seg[0:], 40000)
	pkt := make([]byte, ipv6.HeaderLen+len(seg))
	ipv6.Repr{Src: ip6A, Dst: ip6B, NextHeader: ipv6.NextTCP, PayloadLen: len(seg), HopLimit: 64, FlowLabel: 7}.Emit(ipv6.Packet(pkt))
	copy(pkt[ipv6.HeaderLen:], seg)
	f := ip6Frame(macB, macA, pkt)
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		m := n.pool.Get()
		_ = m.SetData(f)
		m.Flags = n.rxFlags
		n.ifc.Input(time.Millisecond, m)
	}
	if delivered == 0 {
		b.Fatal("nothing delivered")
	}
}
