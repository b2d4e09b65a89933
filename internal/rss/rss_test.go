package rss_test

import (
	"net/netip"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/rss"
)

func v4(s string) [4]byte { return netip.MustParseAddr(s).As4() }

var _ = Describe("RSS", func() {
	// /work/shared/data/rss-toeplitz-vectors.md: Microsoft's RSS
	// verification suite for IPv4 ("Verifying the RSS Hash Calculation").
	DescribeTable("the Toeplitz hash matches the Microsoft verification vectors",
		func(dst string, dport uint16, src string, sport uint16, ipOnly, withTCP uint32) {
			key := rss.MicrosoftKey()
			Expect(rss.HashIPv4Addrs(key, v4(src), v4(dst))).To(Equal(ipOnly))
			Expect(rss.HashIPv4(key, v4(src), v4(dst), sport, dport)).To(Equal(withTCP))
			in := rss.IPv4Input(v4(src), v4(dst), sport, dport)
			tab := rss.NewTable(key)
			Expect(tab.Hash(in[:8])).To(Equal(ipOnly))
			Expect(tab.Hash(in[:])).To(Equal(withTCP))
			var t rss.Tuple
			s, d := v4(src), v4(dst)
			t.Set(s[:], d[:], true, sport, dport)
			Expect(t.Bytes()).To(Equal(in[:]))
			t.Set(s[:], d[:], false, sport, dport)
			Expect(rss.Toeplitz(key, t.Bytes())).To(Equal(ipOnly))
		},
		Entry("161.142.100.80:1766", "161.142.100.80", uint16(1766), "66.9.149.187", uint16(2794), uint32(0x323e8fc2), uint32(0x51ccc178)),
		Entry("65.69.140.83:4739", "65.69.140.83", uint16(4739), "199.92.111.2", uint16(14230), uint32(0xd718262a), uint32(0xc626b0ea)),
		Entry("12.22.207.184:38024", "12.22.207.184", uint16(38024), "24.19.198.95", uint16(12898), uint32(0xd2d0a5de), uint32(0x5c2b394a)),
		Entry("209.142.163.6:2217", "209.142.163.6", uint16(2217), "38.27.205.30", uint16(48228), uint32(0x82989176), uint32(0xafc7327f)),
		Entry("202.188.127.2:1303", "202.188.127.2", uint16(1303), "153.39.163.191", uint16(44251), uint32(0x5d1809c5), uint32(0x10e828a2)),
	)

	It("hashes without allocating", func() {
		key := rss.MicrosoftKey()
		tab := rss.NewTable(key)
		in := rss.IPv4Input(v4("66.9.149.187"), v4("161.142.100.80"), 2794, 1766)
		Expect(testing.AllocsPerRun(100, func() {
			_ = rss.Toeplitz(key, in[:])
			_ = tab.Hash(in[:])
			_ = rss.HashIPv4(key, v4("1.2.3.4"), v4("5.6.7.8"), 1, 2)
		})).To(BeZero())
	})

	It("treats key bits past a short key as zero instead of panicking", func() {
		Expect(rss.Toeplitz(nil, []byte{0xff, 0xff})).To(BeZero())
		Expect(rss.Toeplitz(rss.MicrosoftKey()[:3], make([]byte, 40))).To(BeZero())
	})

	It("fills the RETA round-robin and indexes it by the hash's low bits", func() {
		reta := make([]uint16, 128)
		rss.DefaultRETA(reta, 3)
		Expect(reta[:5]).To(Equal([]uint16{0, 1, 2, 0, 1}))
		Expect(rss.RETAQueue(reta, 0x51ccc178)).To(Equal(reta[0x51ccc178%128]))
		Expect(rss.RETAQueue(nil, 7)).To(Equal(uint16(0)))
		rss.DefaultRETA(reta, 0)
		Expect(reta).To(HaveEach(uint16(0)))
	})
})

// FuzzToeplitz checks the table against the bit loop on any input and
// that short keys never panic.
func FuzzToeplitz(f *testing.F) {
	f.Add([]byte{66, 9, 149, 187, 161, 142, 100, 80, 0x0a, 0xea, 0x06, 0xe6})
	f.Add([]byte{})
	key := rss.MicrosoftKey()
	tab := rss.NewTable(key)
	f.Fuzz(func(t *testing.T, in []byte) {
		_ = rss.Toeplitz(key[:3], in)
		if len(in) <= rss.MaxInput && rss.Toeplitz(key, in) != tab.Hash(in) {
			t.Fatalf("table and bit loop disagree on %x", in)
		}
	})
}

// BenchmarkToeplitz compares the bit loop with the table on an IPv4
// 4-tuple (12 bytes).
func BenchmarkToeplitz(b *testing.B) {
	key := rss.MicrosoftKey()
	tab := rss.NewTable(key)
	in := rss.IPv4Input(v4("66.9.149.187"), v4("161.142.100.80"), 2794, 1766)
	b.Run("bits", func(b *testing.B) {
		b.ReportAllocs()
		var h uint32
		for i := 0; i < b.N; i++ {
			in[0] = byte(i)
			h ^= rss.Toeplitz(key, in[:])
		}
		_ = h
	})
	b.Run("table", func(b *testing.B) {
		b.ReportAllocs()
		var h uint32
		for i := 0; i < b.N; i++ {
			in[0] = byte(i)
			h ^= tab.Hash(in[:])
		}
		_ = h
	})
}

var _ = Describe("source ports for a queue", func() {
	It("returns only ports whose replies land on the queue, advancing and wrapping in the range", func() {
		key := rss.MicrosoftKey()
		t := rss.NewTable(key)
		reta := make([]uint16, 128)
		rss.DefaultRETA(reta, 4)
		local, remote := [4]byte{10, 0, 0, 2}, [4]byte{10, 0, 0, 1}
		next := uint16(60990)
		seen := map[uint16]bool{}
		for range 8 {
			p := rss.PortForQueue(t, reta, 3, remote, local, 6379, &next, 60990, 60999)
			if p == 0 {
				break
			}
			Expect(p).To(BeNumerically(">=", 60990))
			Expect(p).To(BeNumerically("<=", 60999))
			in := rss.IPv4Input(remote, local, 6379, p)
			Expect(rss.RETAQueue(reta, rss.Toeplitz(key, in[:]))).To(BeEquivalentTo(3))
			seen[p] = true
		}
		Expect(seen).NotTo(BeEmpty())
		// A range with no fitting port gives 0 rather than looping.
		none := uint16(1)
		Expect(rss.PortForQueue(t, []uint16{0}, 1, remote, local, 1, &none, 1, 50)).To(BeZero())
	})
})

func v6(s string) [16]byte { return netip.MustParseAddr(s).As16() }

var _ = Describe("RSS over IPv6", func() {
	// Microsoft's RSS verification suite for IPv6 ("Verifying the RSS
	// Hash Calculation"; DPDK's test_thash uses the same vectors).
	DescribeTable("the Toeplitz hash matches the Microsoft IPv6 verification vectors",
		func(dst string, dport uint16, src string, sport uint16, ipOnly, withTCP uint32) {
			key := rss.MicrosoftKey()
			Expect(rss.HashIPv6Addrs(key, v6(src), v6(dst))).To(Equal(ipOnly))
			Expect(rss.HashIPv6(key, v6(src), v6(dst), sport, dport)).To(Equal(withTCP))
			in := rss.IPv6Input(v6(src), v6(dst), sport, dport)
			tab := rss.NewTable(key)
			Expect(tab.Hash(in[:32])).To(Equal(ipOnly))
			Expect(tab.Hash(in[:])).To(Equal(withTCP))
			var t rss.Tuple
			s, d := v6(src), v6(dst)
			t.Set(s[:], d[:], true, sport, dport)
			Expect(t.Bytes()).To(Equal(in[:]))
		},
		Entry("[3ffe:2501:200:3::1]:1766", "3ffe:2501:200:3::1", uint16(1766), "3ffe:2501:200:1fff::7", uint16(2794), uint32(0x2cc18cd5), uint32(0x40207d3d)),
		Entry("[ff02::1]:4739", "ff02::1", uint16(4739), "3ffe:501:8::260:97ff:fe40:efab", uint16(14230), uint32(0x0f0c461c), uint32(0xdde51bbf)),
		Entry("[fe80::200:f8ff:fe21:67cf]:38024", "fe80::200:f8ff:fe21:67cf", uint16(38024), "3ffe:1900:4545:3:200:f8ff:fe21:67cf", uint16(44251), uint32(0x4b61e985), uint32(0x02d1feef)),
	)

	It("PortForQueue6 picks local ports whose IPv6 replies hash to the queue", func() {
		key := rss.MicrosoftKey()
		t := rss.NewTable(key)
		reta := make([]uint16, 128)
		rss.DefaultRETA(reta, 4)
		remote, local := v6("fd00::1"), v6("fd00::2")
		next := uint16(20000)
		for q := range 4 {
			p := rss.PortForQueue6(t, reta, q, remote, local, 6379, &next, 20000, 65534)
			Expect(p).NotTo(BeZero())
			in := rss.IPv6Input(remote, local, 6379, p)
			Expect(rss.RETAQueue(reta, rss.Toeplitz(key, in[:]))).To(BeEquivalentTo(q))
		}
		none := uint16(1)
		Expect(rss.PortForQueue6(t, []uint16{0}, 1, remote, local, 1, &none, 1, 50)).To(BeZero())
	})
})
