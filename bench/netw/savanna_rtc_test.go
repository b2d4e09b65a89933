package netw_test

import (
	"context"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/bench/netw"
)

var _ = Describe("the savanna-rtc network", func() {
	It("is savanna's pair, sized as savanna's, dialled by address, and refuses net.Conn", func() {
		n, err := netw.New(netw.Config{Name: "savanna-rtc", MTU: 9000})
		Expect(err).NotTo(HaveOccurred())
		defer n.Close()
		s := n.(*netw.SavannaRTC)
		Expect(s.Name()).To(Equal("savanna-rtc"))
		Expect(s.MTU()).To(Equal(9000))
		Expect(s.Sizing()).To(Equal(netw.SizingFor(9000)))
		Expect(s.ServerAddr(80).AddrPort()).To(Equal(netip.MustParseAddrPort("10.9.0.2:80")))
		_, err = s.Listen(7030)
		Expect(err).To(MatchError(netw.ErrRunToCompletion))
		_, err = s.Dial(context.Background(), 7030)
		Expect(err).To(MatchError(netw.ErrRunToCompletion))
	})

	It("speaks IPv6 when asked, ready as savanna's is", func() {
		n, err := netw.NewSavannaRTC(1500, 6)
		Expect(err).NotTo(HaveOccurred())
		defer n.Close()
		Expect(n.ServerAddr(80).AddrPort()).To(Equal(netip.MustParseAddrPort("[fd00::2]:80")))
		c, _ := n.Runtimes()
		Expect(c.HasIPv4()).To(BeFalse())
	})
})
