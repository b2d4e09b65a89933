package pktgen_test

import (
	"net"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/pktgen"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
)

// oracleFrame serializes, with gopacket (an implementation independent
// of the stack's), the frame pktgen should send from gen to dut: src
// and dst UDP ports, and payload after the UDP header; tag, if not nil,
// is an 802.1Q tag between Ethernet and IPv4, and opts are IPv4 options.
func oracleFrame(b *bench, sport, dport uint16, payload []byte, opts []layers.IPv4Option, tag *layers.Dot1Q) []byte {
	eth := &layers.Ethernet{SrcMAC: b.gen.Port.MACAddr(), DstMAC: b.dut.Port.MACAddr(), EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, Flags: layers.IPv4DontFragment,
		SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}, Options: opts}
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	Expect(udp.SetNetworkLayerForChecksum(ip)).To(Succeed())
	ls := []gopacket.SerializableLayer{eth}
	if tag != nil {
		eth.EthernetType = layers.EthernetTypeDot1Q
		tag.Type = layers.EthernetTypeIPv4
		ls = append(ls, tag)
	}
	ls = append(ls, ip, udp, gopacket.Payload(payload))
	buf := gopacket.NewSerializeBuffer()
	Expect(gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...)).To(Succeed())
	f := buf.Bytes()
	// pktgen sends no UDP checksum (0, "none", RFC 768).
	u := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default).Layer(layers.LayerTypeUDP)
	Expect(u).NotTo(BeNil())
	sum := len(f) - len(u.LayerContents()) - len(u.LayerPayload()) + 6
	f[sum], f[sum+1] = 0, 0
	return f
}

// inject sends frame from the dut's queue 0 to the generator.
func (b *bench) inject(frame []byte) {
	m := b.dut.Pools[0].Get()
	Expect(m).NotTo(BeNil())
	Expect(m.SetData(frame)).To(Succeed())
	Expect(b.dut.Port.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1))
}

// stampAt is a stamp (magic "SVKT", sequence number, send time) in a
// payload of n bytes.
func stampAt(n int, seq uint32, sent time.Duration) []byte {
	p := make([]byte, n)
	copy(p, "SVKT")
	p[4], p[5], p[6], p[7] = byte(seq>>24), byte(seq>>16), byte(seq>>8), byte(seq)
	for i := range 8 {
		p[8+i] = byte(uint64(sent) >> (56 - 8*i))
	}
	return p
}

var _ = Describe("Generator's frames", func() {
	It("are what an independent serializer makes of the same headers, byte for byte", func() {
		b := newBench(pktgen.Config{RatePPS: 1e6, Count: 20, Size: 128, Flows: 3, SrcPort: 4000, DstPort: 7},
			simhost.NICConfig{}, simhost.NICConfig{}, wire)
		s := b.drain()
		b.eng.RunUntil(time.Millisecond)
		Expect(s.frames).To(HaveLen(20))
		for i, f := range s.frames {
			// Only the stamp (seq i, sent at i us) and the flow's port vary.
			want := oracleFrame(b, uint16(4000+i%3), 7, stampAt(128-42, uint32(i), time.Duration(i)*time.Microsecond), nil, nil)
			Expect(f.data).To(Equal(want), "frame %d", i)
		}
	})

	It("are measured when they come back whatever their headers' lengths: an 802.1Q tag, IPv4 options", func() {
		b := newBench(pktgen.Config{RatePPS: 1e5, Count: 10}, simhost.NICConfig{}, simhost.NICConfig{}, wire)
		b.reflect()
		b.inject(oracleFrame(b, 1024, 9, stampAt(18, 0, 0), nil, &layers.Dot1Q{VLANIdentifier: 5}))
		b.inject(oracleFrame(b, 1024, 9, stampAt(18, 0, 0), []layers.IPv4Option{{OptionType: 148, OptionLength: 4, OptionData: []byte{0, 0}}}, nil))
		b.eng.RunUntil(time.Millisecond)
		s := b.g.Stats(b.eng.Now())
		Expect(s.RxForeign).To(BeZero())
		Expect(s.RxPackets).To(BeEquivalentTo(10 + 2))
		Expect(s.RTT.Count).To(BeEquivalentTo(10 + 2))
	})

	It("are told from foreign frames by their headers, not by bytes at a fixed offset", func() {
		b := newBench(pktgen.Config{RatePPS: 1e5, Count: 10}, simhost.NICConfig{}, simhost.NICConfig{}, wire)
		b.reflect()
		// The magic where a UDP payload would start, in frames that
		// carry no UDP: an unknown EtherType, and IPv4 carrying TCP.
		notIP := oracleFrame(b, 1024, 9, stampAt(18, 0, 0), nil, nil)
		notIP[12], notIP[13] = 0x88, 0xb5
		b.inject(notIP)
		tcp := oracleFrame(b, 1024, 9, stampAt(18, 0, 0), nil, nil)
		tcp[14+9] = 6 // protocol TCP (the header checksum is not pktgen's concern)
		b.inject(tcp)
		// A UDP length running past the datagram.
		long := oracleFrame(b, 1024, 9, stampAt(18, 0, 0), nil, nil)
		long[14+20+4], long[14+20+5] = 0x01, 0x00
		b.inject(long)
		b.eng.RunUntil(time.Millisecond)
		s := b.g.Stats(b.eng.Now())
		Expect(s.RxForeign).To(BeEquivalentTo(3))
		Expect(s.RxPackets).To(BeEquivalentTo(10))
	})

	It("refuses MAC addresses that are not 48 bits", func() {
		b := newBench(pktgen.Config{}, simhost.NICConfig{}, simhost.NICConfig{}, wire)
		ep := endpoints(b.gen, b.dut)
		ep.DstMAC = ep.DstMAC[:4]
		_, err := pktgen.New(pktgen.Config{}, ep, b.gen.Port, 0, b.gen.Pools[0])
		Expect(err).To(MatchError(ContainSubstring("48-bit MAC")))
	})
})
