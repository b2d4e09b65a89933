package nic_test

import (
	"encoding/binary"
	"net"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
)

// tupleInput builds the RSS input of the verification suite: source
// address, destination address, and with ports source then destination
// port, in network byte order.
func tupleInput(src, dst string, sport, dport uint16, ports bool) []byte {
	in := append(append([]byte(nil), net.ParseIP(src).To4()...), net.ParseIP(dst).To4()...)
	if ports {
		in = binary.BigEndian.AppendUint16(in, sport)
		in = binary.BigEndian.AppendUint16(in, dport)
	}
	return in
}

var _ = Describe("RSS", func() {
	// /work/shared/data/rss-toeplitz-vectors.md: Microsoft's RSS
	// verification suite for IPv4.
	DescribeTable("Toeplitz hash matches the Microsoft verification vectors",
		func(dst string, dport uint16, src string, sport uint16, ipOnly, withTCP uint32) {
			key := nic.MicrosoftRSSKey()
			Expect(nic.ToeplitzHash(key, tupleInput(src, dst, sport, dport, false))).To(Equal(ipOnly))
			Expect(nic.ToeplitzHash(key, tupleInput(src, dst, sport, dport, true))).To(Equal(withTCP))
			// The ports' precomputed tables agree bit for bit.
			Expect(nic.ToeplitzTableHash(key, tupleInput(src, dst, sport, dport, false))).To(Equal(ipOnly))
			Expect(nic.ToeplitzTableHash(key, tupleInput(src, dst, sport, dport, true))).To(Equal(withTCP))
		},
		Entry("161.142.100.80:1766", "161.142.100.80", uint16(1766), "66.9.149.187", uint16(2794), uint32(0x323e8fc2), uint32(0x51ccc178)),
		Entry("65.69.140.83:4739", "65.69.140.83", uint16(4739), "199.92.111.2", uint16(14230), uint32(0xd718262a), uint32(0xc626b0ea)),
		Entry("12.22.207.184:38024", "12.22.207.184", uint16(38024), "24.19.198.95", uint16(12898), uint32(0xd2d0a5de), uint32(0x5c2b394a)),
		Entry("209.142.163.6:2217", "209.142.163.6", uint16(2217), "38.27.205.30", uint16(48228), uint32(0x82989176), uint32(0xafc7327f)),
		Entry("202.188.127.2:1303", "202.188.127.2", uint16(1303), "153.39.163.191", uint16(44251), uint32(0x5d1809c5), uint32(0x10e828a2)),
	)

	It("hashes a real TCP frame like the vector it carries", func() {
		frame := buildFrame(flow{src: net.ParseIP("66.9.149.187"), dst: net.ParseIP("161.142.100.80"), sport: 2794, dport: 1766, tcp: true, payload: 10})
		h, ok := nic.RSSHash(nic.MicrosoftRSSKey(), frame, hw.RSSIPv4|hw.RSSIPv4TCP)
		Expect(ok).To(BeTrue())
		Expect(h).To(Equal(uint32(0x51ccc178)))
		// With only the IPv4 type enabled the ports are left out.
		h, ok = nic.RSSHash(nic.MicrosoftRSSKey(), frame, hw.RSSIPv4)
		Expect(ok).To(BeTrue())
		Expect(h).To(Equal(uint32(0x323e8fc2)))
		// UDP types do not match a TCP frame, nor IPv6 types an IPv4 one.
		_, ok = nic.RSSHash(nic.MicrosoftRSSKey(), frame, hw.RSSIPv4UDP|hw.RSSIPv6)
		Expect(ok).To(BeFalse())
	})

	It("hashes IPv6 4-tuples over 36 bytes of input", func() {
		frame := buildFrame(flow{ipv6: true, src: net.ParseIP("2001:db8::1"), dst: net.ParseIP("2001:db8::2"), sport: 1, dport: 2, payload: 8})
		h, ok := nic.RSSHash(nic.MicrosoftRSSKey(), frame, hw.RSSIPv6UDP)
		Expect(ok).To(BeTrue())
		in := append(append([]byte(nil), net.ParseIP("2001:db8::1")...), net.ParseIP("2001:db8::2")...)
		in = append(in, 0, 1, 0, 2)
		Expect(h).To(Equal(nic.ToeplitzHash(nic.MicrosoftRSSKey(), in)))
	})

	It("maps hashes through the RETA as queue = reta[hash % len(reta)]", func() {
		reta := make([]uint16, 128)
		nic.DefaultRETA(reta, 3)
		Expect(reta[:7]).To(Equal([]uint16{0, 1, 2, 0, 1, 2, 0}))
		Expect(nic.RETAQueue(reta, 0x51ccc178)).To(Equal(reta[0x51ccc178%128]))
		Expect(nic.RETAQueue(nil, 7)).To(Equal(uint16(0)))
	})

	It("spreads flows over rx queues by the RETA, and SetRETA steers them", func() {
		eng := sim.NewEngine(1)
		mem := newTestMem(1<<16, 1)
		o := defaultOpts()
		o.rxq, o.rss, o.rxOffloads = 4, hw.RSSIPv4|hw.RSSIPv4UDP, hw.RxOffloadRSSHash
		a, txPool := newPort(eng, mem, 0, "a", defaultOpts())
		b, _ := newPort(eng, mem, 1, "b", o)
		_, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
		Expect(err).NotTo(HaveOccurred())
		reta := b.RETA()
		Expect(reta).To(HaveLen(256))
		const flows = 64
		send := func() {
			for i := 0; i < flows; i++ {
				f := buildFrame(flow{src: net.IPv4(10, 0, 0, 1), dst: net.IPv4(10, 0, 1, byte(i)), sport: uint16(1000 + i), dport: 80, payload: 20})
				Expect(a.TxBurst(0, []*hw.Mbuf{mbufOf(txPool, f)})).To(Equal(1))
			}
			eng.Run()
		}
		send()
		var buf [flows]*hw.Mbuf
		total := 0
		for q := 0; q < 4; q++ {
			n := b.RxBurst(q, buf[:])
			Expect(n).To(BeNumerically(">", 0), "queue %d got no flow", q)
			for _, m := range buf[:n] {
				Expect(m.Flags & hw.RxRSSHash).NotTo(BeZero())
				Expect(int(m.Queue)).To(Equal(q))
				Expect(int(reta[m.RSSHash%256])).To(Equal(q))
				m.Free()
			}
			total += n
		}
		Expect(total).To(Equal(flows))
		// Steer everything to queue 3.
		all3 := make([]uint16, 256)
		for i := range all3 {
			all3[i] = 3
		}
		Expect(b.SetRETA(all3)).To(Succeed())
		send()
		Expect(b.RxQueueCount(3)).To(Equal(flows))
		Expect(b.SetRETA(all3[:10])).To(MatchError(ContainSubstring("RETA size is 256")))
		all3[5] = 4
		Expect(b.SetRETA(all3)).To(MatchError(ContainSubstring("names rx queue 4")))
	})

	It("hashes without allocating", func() {
		key := nic.MicrosoftRSSKey()
		frame := buildFrame(flow{src: net.IPv4(1, 2, 3, 4), dst: net.IPv4(5, 6, 7, 8), sport: 1, dport: 2, tcp: true})
		allocs := testing.AllocsPerRun(100, func() {
			_, _ = nic.RSSHash(key, frame, hw.RSSIPv4TCP)
		})
		Expect(allocs).To(BeZero())
	})
})
