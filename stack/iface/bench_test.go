package iface_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// BenchmarkInputUDP measures Input of one UDP datagram to a bound socket
// (software checksums), then the application's read.
func BenchmarkInputUDP(b *testing.B) {
	n := newNode(cfgB())
	sock, _ := n.ifc.ListenUDP(7)
	f := frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, udpDatagram(1, 7, make([]byte, 64))))
	buf := make([]byte, 2048)
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		m := n.pool.Get()
		_ = m.SetData(f)
		n.ifc.Input(0, m)
		sock.RecvFrom(buf)
	}
	if n.ifc.Stats().UDP.InDatagrams == 0 {
		b.Fatal("nothing delivered")
	}
}

// BenchmarkInputUDPOffload is BenchmarkInputUDP with the NIC's checksum
// verdicts (RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD).
func BenchmarkInputUDPOffload(b *testing.B) {
	n := newNode(cfgB())
	n.rxFlags = hwRxGood
	sock, _ := n.ifc.ListenUDP(7)
	f := frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, udpDatagram(1, 7, make([]byte, 64))))
	buf := make([]byte, 2048)
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		m := n.pool.Get()
		_ = m.SetData(f)
		m.Flags = n.rxFlags
		n.ifc.Input(0, m)
		sock.RecvFrom(buf)
	}
}

// BenchmarkInputEcho measures Input of an ICMP echo request and the reply
// built in place and handed to the link.
func BenchmarkInputEcho(b *testing.B) {
	n := newNode(cfgB())
	n.ifc.AddNeighbor(0, ipA, macA)
	f := frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoICMP, echoRequest()))
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		m := n.pool.Get()
		_ = m.SetData(f)
		n.ifc.Input(0, m)
		for _, o := range n.link.out {
			o.Free()
		}
		n.link.out = n.link.out[:0]
	}
	if n.ifc.Stats().ICMP.OutEchoReps == 0 {
		b.Fatal("no replies")
	}
}

// outputNode is node B with A resolved and the link's tx offloads off,
// for the output benchmarks.
func outputNode(off hw.TxOffloads) *node {
	n := newNode(cfgB())
	n.link.off = off
	n.ifc.AddNeighbor(0, ipA, macA)
	return n
}

// drainOut frees what the link was handed.
func (n *node) drainOut() {
	for _, o := range n.link.out {
		o.Free()
	}
	n.link.out = n.link.out[:0]
}

// benchmarkOutputTCP measures OutputIPv4 of one 1448-byte TCP segment
// whose checksum the interface fills, in software or through the NIC.
func benchmarkOutputTCP(b *testing.B, off hw.TxOffloads) {
	n := outputNode(off)
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

// BenchmarkOutputTCP fills the TCP checksum in software.
func BenchmarkOutputTCP(b *testing.B) { benchmarkOutputTCP(b, 0) }

// BenchmarkOutputTCPOffload leaves it to the NIC (pseudo-header sum).
func BenchmarkOutputTCPOffload(b *testing.B) { benchmarkOutputTCP(b, hwTxAll()) }

// benchmarkSendUDP measures SendTo of a 64-byte datagram.
func benchmarkSendUDP(b *testing.B, off hw.TxOffloads) {
	n := outputNode(off)
	sock, _ := n.ifc.ListenUDP(7)
	data := make([]byte, 64)
	to := iface.UDPAddr{IP: ipA, Port: 9}
	b.ReportAllocs()
	for b.Loop() {
		if err := sock.SendTo(0, data, to); err != nil {
			b.Fatal(err)
		}
		n.drainOut()
	}
}

// BenchmarkSendUDP fills the UDP checksum in software.
func BenchmarkSendUDP(b *testing.B) { benchmarkSendUDP(b, 0) }

// BenchmarkSendUDPOffload leaves it to the NIC.
func BenchmarkSendUDPOffload(b *testing.B) { benchmarkSendUDP(b, hwTxAll()) }

// BenchmarkInputTCP measures Input of one 1448-byte TCP segment, its
// checksum verified in software, to a registered transport.
func BenchmarkInputTCP(b *testing.B) {
	n := newNode(cfgB())
	delivered := 0
	_ = n.ifc.RegisterTransport(ipv4.ProtoTCP, iface.HandlerFunc(func(time.Duration, iface.Segment) { delivered++ }))
	seg := make([]byte, 20+1448)
	seg[12] = 5 << 4
	binary.BigEndian.PutUint16(seg[16:], checksum.Finish(checksum.Add(checksum.PseudoHeaderV4(ipA, ipB, 6, len(seg)), seg)))
	f := frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoTCP, seg))
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		m := n.pool.Get()
		_ = m.SetData(f)
		n.ifc.Input(0, m)
	}
	if delivered == 0 || n.ifc.Stats().TCP.InCsumErrors != 0 {
		b.Fatalf("%d delivered, %d checksum errors", delivered, n.ifc.Stats().TCP.InCsumErrors)
	}
}
