package lstack

import (
	"encoding/binary"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// nullLink is a Link that sends nothing: label needs only the
// interface's secret.
type nullLink struct{}

func (nullLink) Alloc() *hw.Mbuf           { return nil }
func (nullLink) Transmit(m *hw.Mbuf)       { m.Free() }
func (nullLink) TxOffloads() hw.TxOffloads { return 0 }

var _ = Describe("the flow label of a TCP connection over IPv6 (RFC 6437 section 3)", func() {
	It("is the interface's label of the 4-tuple for every segment, however the connections' segments interleave", func() {
		ifc, err := iface.New(iface.Config{MAC: "02:00:00:00:00:01", IPv6: iface.IPv6Config{Address: "fd00::1/64"}}, nullLink{})
		Expect(err).NotTo(HaveOccurred())
		o := &tcpOutput{ifc: ifc}
		src, _ := ipv6.ParseAddr("fd00::1")
		dsts := []ipv6.Addr{}
		for _, s := range []string{"fd00::2", "fd00::3"} {
			a, _ := ipv6.ParseAddr(s)
			dsts = append(dsts, a)
		}
		seg := make([]byte, 20)
		// Runs of one flow (the cached label) broken by others, and many
		// flows, each recomputed whenever it comes back.
		seq := []int{0, 0, 0, 1, 1, 0, 2, 0, 3, 3, 1}
		for k := range 1<<16 + 500 {
			seq = append(seq, k%7, k)
		}
		for _, f := range seq {
			sport, dport := uint16(40000+f%20000), uint16(6379+f/20000)
			dst := dsts[f%2]
			binary.BigEndian.PutUint16(seg, sport)
			binary.BigEndian.PutUint16(seg[2:], dport)
			want := ifc.FlowLabel6(src, dst, ipv6.NextTCP, sport, dport)
			Expect(o.label(tcp.IPFrom16(src), tcp.IPFrom16(dst), seg)).To(Equal(want), "flow %d", f)
		}
		// The same ports between other addresses are another flow.
		binary.BigEndian.PutUint16(seg, 40000)
		binary.BigEndian.PutUint16(seg[2:], 6379)
		pairs := [][2]ipv6.Addr{{src, dsts[0]}, {src, dsts[1]}, {dsts[1], dsts[1]}, {src, dsts[1]}, {dsts[1], dsts[0]}, {src, dsts[0]}}
		for k, pr := range pairs {
			from, to := pr[0], pr[1]
			want := ifc.FlowLabel6(from, to, ipv6.NextTCP, 40000, 6379)
			Expect(o.label(tcp.IPFrom16(from), tcp.IPFrom16(to), seg)).To(Equal(want), "addresses %d", k)
		}
		Expect(o.label(tcp.IPFrom16(src), tcp.IPFrom16(dsts[0]), seg[:3])).To(BeZero(), "no ports")
	})
})
