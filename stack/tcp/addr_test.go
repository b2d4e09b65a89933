package tcp

import (
	"net/netip"
	"unsafe"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("IP and Addr, TCP's endpoints of either family", func() {
	v4 := IPFrom4([4]byte{10, 0, 0, 1})
	v6 := IPFrom16(netip.MustParseAddr("fd00::1").As16())

	DescribeTable("print in the usual forms",
		func(a Addr, want string) { Expect(a.String()).To(Equal(want)) },
		Entry("IPv4", Addr{IP: v4, Port: 80}, "10.0.0.1:80"),
		Entry("IPv6, bracketed, RFC 5952's short form", Addr{IP: v6, Port: 80}, "[fd00::1]:80"),
		Entry("the zero Addr: IPv4's wildcard", Addr{}, "0.0.0.0:0"),
		Entry("IPv6's wildcard", Addr{IP: IPFrom16([16]byte{}), Port: 443}, "[::]:443"),
		Entry("IPv4-mapped IPv6 stays IPv6", Addr{IP: IPFrom16(netip.MustParseAddr("::ffff:10.0.0.1").As16()), Port: 1},
			"[::ffff:10.0.0.1]:1"),
	)

	It("is comparable and pointer-free, and tells the families apart", func() {
		Expect(IPFrom4([4]byte{10, 0, 0, 1}) == v4).To(BeTrue())
		// 2001:db8:: and 32.1.13.184 have the same first four bytes.
		a := IPFrom16(netip.MustParseAddr("2001:db8::").As16())
		b := IPFrom4([4]byte{0x20, 0x01, 0x0d, 0xb8})
		Expect(a == b).To(BeFalse())
		m := map[fourTuple]int{{localAddr: a, localPort: 1}: 1, {localAddr: b, localPort: 1}: 2}
		Expect(m).To(HaveLen(2))
		Expect(unsafe.Sizeof(IP{})).To(BeEquivalentTo(17))
		Expect(unsafe.Sizeof(fourTuple{})).To(BeEquivalentTo(38), "no padding: hashed as plain memory")
		Expect(IP{}.Is4()).To(BeTrue())
		Expect(IP{}.IsUnspecified()).To(BeTrue())
		Expect(IPFrom16([16]byte{}).IsUnspecified()).To(BeTrue())
		Expect(v6.IsUnspecified()).To(BeFalse())
		Expect(v4.unspecified()).To(Equal(IP{}))
		Expect(v6.unspecified()).To(Equal(IPFrom16([16]byte{})))
	})

	It("round-trips through bytes and netip", func() {
		Expect(v4.Is4()).To(BeTrue())
		Expect(v4.Is6()).To(BeFalse())
		Expect(v4.As4()).To(Equal([4]byte{10, 0, 0, 1}))
		Expect(v4.As16()).To(Equal(netip.MustParseAddr("::ffff:10.0.0.1").As16()))
		Expect(v6.Is6()).To(BeTrue())
		Expect(v6.As4()).To(Equal([4]byte{}), "no IPv4 form")
		Expect(IPFrom16(v6.As16())).To(Equal(v6))
		for _, s := range []string{"10.0.0.1", "0.0.0.0", "255.255.255.255", "fd00::1", "::", "::ffff:1.2.3.4", "2001:db8::8:800:200c:417a"} {
			na := netip.MustParseAddr(s)
			ip, ok := IPFromNetip(na)
			Expect(ok).To(BeTrue())
			Expect(ip.Netip()).To(Equal(na), s)
			Expect(ip.String()).To(Equal(na.String()))
			ap := netip.AddrPortFrom(na, 8080)
			a, ok := AddrFromNetip(ap)
			Expect(ok).To(BeTrue())
			Expect(a.AddrPort()).To(Equal(ap))
			Expect(a.String()).To(Equal(ap.String()))
		}
		zoned, ok := IPFromNetip(netip.MustParseAddr("fe80::1%eth0"))
		Expect(ok).To(BeTrue())
		Expect(zoned.String()).To(Equal("fe80::1"), "the zone is the network layer's")
		_, ok = IPFromNetip(netip.Addr{})
		Expect(ok).To(BeFalse())
		_, ok = AddrFromNetip(netip.AddrPort{})
		Expect(ok).To(BeFalse())
		Expect(AddrFrom4([4]byte{1, 2, 3, 4}, 5)).To(Equal(Addr{IP: IPFrom4([4]byte{1, 2, 3, 4}), Port: 5}))
	})

	It("orders IPv4 before IPv6, then by bytes", func() {
		Expect(v4.Compare(v6)).To(Equal(-1))
		Expect(v6.Compare(v4)).To(Equal(1))
		Expect(v4.Compare(v4)).To(Equal(0))
		Expect(IPFrom4([4]byte{10, 0, 0, 2}).Compare(v4)).To(Equal(1))
		for _, p := range [][2]string{{"10.0.0.1", "fd00::1"}, {"fd00::1", "fd00::2"}, {"1.2.3.4", "1.2.3.5"}} {
			a, _ := IPFromNetip(netip.MustParseAddr(p[0]))
			b, _ := IPFromNetip(netip.MustParseAddr(p[1]))
			Expect(a.Compare(b)).To(Equal(a.Netip().Compare(b.Netip())), "as netip orders %v", p)
		}
	})

	It("hashes an IPv4 4-tuple as the two words it always was, so ISNs and cookies do not move; IPv6 as five", func() {
		t := fourTuple{localAddr: IPFrom4([4]byte{10, 0, 0, 1}), remoteAddr: IPFrom4([4]byte{192, 168, 1, 2}),
			localPort: 80, remotePort: 40000}
		var w [hashWordsMax]uint64
		Expect(t.words(&w)).To(Equal([]uint64{0x0a000001<<32 | 0xc0a80102, 80<<16 | 40000}))
		t6 := fourTuple{localAddr: v6, remoteAddr: IPFrom16(netip.MustParseAddr("fd00::2").As16()), localPort: 80, remotePort: 40000}
		Expect(t6.words(&w)).To(Equal([]uint64{0xfd00 << 48, 1, 0xfd00 << 48, 2, 80<<16 | 40000}))
	})
})
