package iface_test

import (
	"testing"

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
