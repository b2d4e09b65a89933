package tcp

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/checksum"
)

// Specs of the boundary with the network layer: the engine takes the
// pseudo-header sum and the header length from its Output's Network, and
// builds segments in buffers the Output lends only through Lend and
// SendLent.

// pseudoCall is one PseudoHeaderSum call.
type pseudoCall struct {
	src, dst IP
	length   int
}

// otherNetwork is a network layer that is not IPv4: its pseudo-header sum
// is IPv4's plus delta and its header hdr bytes long (40: IPv6's length,
// RFC 8200). It keeps the segments sent, by copy.
type otherNetwork struct {
	ipv4Network
	delta uint64
	hdr   int
	calls []pseudoCall
	segs  [][]byte
}

func (o *otherNetwork) HeaderLen() int { return o.hdr }

func (o *otherNetwork) PseudoHeaderSum(src, dst IP, n int) uint64 {
	o.calls = append(o.calls, pseudoCall{src, dst, n})
	return v4sum(src, dst, n) + o.delta
}

func (o *otherNetwork) SendSegment(_ time.Duration, _, _ IP, seg []byte) error {
	o.segs = append(o.segs, append([]byte(nil), seg...))
	return nil
}

// lender wraps a test Output with the lending half of the contract and
// checks the engine keeps it: it lends a buffer of its own (filled with
// junk, so that a byte the engine does not write shows), sends a lent
// segment by handing it to the wrapped SendSegment, and records every
// misuse: a Lend while a loan is open (one not sent), a SendLent of a
// token that is not the open loan, a length beyond the loan, a copy sent
// while a loan is open.
type lender struct {
	Output
	buf     []byte
	open    uint64 // the open loan's token, 0 when none
	openLen int
	next    uint64
	// refuse, when set, makes the k-th Lend (from 0) lend nothing.
	refuse func(k int) bool

	lends, sentLent, copied int
	misuse                  []string
}

func (l *lender) Lend(n int) ([]byte, uint64) {
	k := l.lends
	l.lends++
	if l.open != 0 {
		l.misuse = append(l.misuse, fmt.Sprintf("Lend %d while loan %d is open", k, l.open))
	}
	l.open = 0
	if l.refuse != nil && l.refuse(k) {
		return nil, 0
	}
	if cap(l.buf) < n {
		l.buf = make([]byte, n)
	}
	b := l.buf[:n:n]
	for i := range b {
		b[i] = 0xa5
	}
	l.next++
	l.open, l.openLen = l.next, n
	return b, l.open
}

func (l *lender) SendLent(now time.Duration, src, dst IP, token uint64, n int) error {
	if token == 0 || token != l.open {
		l.misuse = append(l.misuse, fmt.Sprintf("SendLent of token %d, open %d", token, l.open))
		return errNotLent
	}
	l.open = 0
	if n <= 0 || n > l.openLen {
		l.misuse = append(l.misuse, fmt.Sprintf("SendLent of %d bytes, %d lent", n, l.openLen))
		return errNotLent
	}
	l.sentLent++
	return l.Output.SendSegment(now, src, dst, l.buf[:n])
}

func (l *lender) SendSegment(now time.Duration, src, dst IP, seg []byte) error {
	if l.open != 0 {
		l.misuse = append(l.misuse, fmt.Sprintf("SendSegment while loan %d is open", l.open))
	}
	l.copied++
	return l.Output.SendSegment(now, src, dst, seg)
}

var _ = Describe("The pseudo-header comes from the network layer (RFC 9293 section 3.1)", func() {
	local, remote := IPFrom4([4]byte{10, 0, 0, 1}), IPFrom4([4]byte{10, 0, 0, 2})
	const delta = 0x12345

	newStack := func(offload bool) (*Stack, *otherNetwork) {
		net := &otherNetwork{delta: delta, hdr: ipv4HeaderLen}
		s, err := New(tuned(func(c *Config) { c.ChecksumOffloadTx = offload }), rand.New(rand.NewPCG(1, 2)), net)
		Expect(err).NotTo(HaveOccurred())
		return s, net
	}

	It("writes the checksum over the pseudo-header sum the Output gives, for the segment's addresses and length", func() {
		s, net := newStack(false)
		_, err := s.Connect(0, Addr{local, 40000}, Addr{remote, 80})
		Expect(err).NotTo(HaveOccurred())
		Expect(net.segs).To(HaveLen(1))
		syn := net.segs[0]
		Expect(net.calls).To(Equal([]pseudoCall{{local, remote, len(syn)}}))
		Expect(VerifyChecksum(syn, v4sum(local, remote, len(syn))+delta)).To(BeTrue())
		Expect(VerifyChecksum(syn, v4sum(local, remote, len(syn)))).To(BeFalse(), "not the IPv4 checksum")
		zeroed := append([]byte(nil), syn...)
		zeroed[16], zeroed[17] = 0, 0
		want := checksum.Finish(checksum.Add(v4sum(local, remote, len(syn))+delta, zeroed))
		Expect(binary.BigEndian.Uint16(syn[16:])).To(Equal(want))
	})

	It("writes the Output's folded pseudo-header sum when the checksum is offloaded", func() {
		s, net := newStack(true)
		_, err := s.Connect(0, Addr{local, 40000}, Addr{remote, 80})
		Expect(err).NotTo(HaveOccurred())
		syn := net.segs[0]
		Expect(binary.BigEndian.Uint16(syn[16:])).To(Equal(checksum.Fold(v4sum(local, remote, len(syn)) + delta)))
	})

	It("verifies received checksums over the Output's pseudo-header: an IPv4 checksum is an error there", func() {
		s, net := newStack(false)
		_, err := s.Listen(local, 80, 4)
		Expect(err).NotTo(HaveOccurred())
		syn := Repr{SrcPort: 40000, DstPort: 80, Seq: 1000, Flags: FlagSYN, Window: 65535}
		b := make([]byte, syn.HeaderLen())
		syn.Emit(b)
		setV4Checksum(b, remote, local)
		s.Input(0, remote, local, b)
		Expect(s.Stats().InCsumErrors).To(BeEquivalentTo(1))
		Expect(net.segs).To(BeEmpty())
		SetChecksum(b, v4sum(remote, local, len(b))+delta)
		s.Input(0, remote, local, b)
		Expect(s.Stats().InCsumErrors).To(BeEquivalentTo(1))
		Expect(net.segs).To(HaveLen(1))
		sa, err := Parse(net.segs[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(sa.Flags).To(Equal(FlagSYN | FlagACK))
	})
})

var _ = Describe("The MSS comes from the network layer's header length (RFC 9293 section 3.7.1)", func() {
	local, remote := IPFrom4([4]byte{10, 0, 0, 1}), IPFrom4([4]byte{10, 0, 0, 2})

	synMSS := func(hdr int, cookies bool) uint16 {
		net := &otherNetwork{hdr: hdr}
		s, err := New(tuned(func(c *Config) {
			if cookies {
				c.SynBacklog = 0
			}
		}), rand.New(rand.NewPCG(1, 2)), net)
		Expect(err).NotTo(HaveOccurred())
		if cookies {
			_, err = s.Listen(local, 80, 4)
			Expect(err).NotTo(HaveOccurred())
			syn := Repr{SrcPort: 40000, DstPort: 80, Seq: 1000, Flags: FlagSYN, Window: 65535, MSS: 9000}
			b := make([]byte, syn.HeaderLen())
			syn.Emit(b)
			setV4Checksum(b, remote, local)
			s.Input(0, remote, local, b)
			Expect(s.Stats().SynCookiesSent).To(BeEquivalentTo(1))
		} else {
			_, err = s.Connect(0, Addr{local, 40000}, Addr{remote, 80})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(net.segs).To(HaveLen(1))
		r, err := Parse(net.segs[0])
		Expect(err).NotTo(HaveOccurred())
		return r.MSS
	}

	DescribeTable("advertises MTU less the network header and the TCP header",
		func(hdr int, cookies bool, want int) {
			Expect(synMSS(hdr, cookies)).To(BeEquivalentTo(want))
		},
		Entry("IPv4 (20 bytes), SYN", 20, false, 1460),
		Entry("a 40-byte header (IPv6's length), SYN", 40, false, 1440),
		Entry("IPv4, SYN-ACK with a SYN cookie", 20, true, 1460),
		Entry("a 40-byte header, SYN-ACK with a SYN cookie", 40, true, 1440),
	)

	It("refuses a network whose header leaves the MTU too small an MSS, naming mtu", func() {
		_, err := New(tuned(func(c *Config) { c.MTU = 200 }), rand.New(rand.NewPCG(1, 2)), &otherNetwork{hdr: 120})
		var ce *ConfigError
		Expect(err).To(BeAssignableToTypeOf(ce))
		Expect(err).To(MatchError(ContainSubstring("mtu: 200 leaves an MSS of 60 behind a 120-byte network header")))
		_, err = New(DefaultConfig(), rand.New(rand.NewPCG(1, 2)), &otherNetwork{hdr: 8})
		Expect(err).To(MatchError(ContainSubstring("network header of 8 bytes")))
	})
})

var _ = Describe("Buffers the Output lends (Lend, SendLent)", func() {
	It("builds each segment in the buffer lent for it and sends it once, by its token; without a loan it sends a copy", func() {
		h := newHarness(DefaultConfig())
		l := &lender{Output: h.out, refuse: func(k int) bool { return k%3 == 2 }}
		h.s.out = l
		c := h.established(defaultPeer())
		data := pattern(20 * segSize)
		n, err := c.Write(data)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(len(data)))
		var got []byte
		for len(got) < len(data) {
			h.s.Poll(h.now)
			segs := h.take()
			Expect(segs).NotTo(BeEmpty())
			for _, s := range segs {
				got = append(got, s.Payload...)
			}
			h.inject(h.seg(FlagACK, (h.ourISS + 1).Add(len(got)), nil))
		}
		Expect(got).To(Equal(data))
		Expect(l.misuse).To(BeEmpty())
		st := h.s.Stats()
		Expect(l.sentLent+l.copied).To(BeEquivalentTo(st.OutSegs), "every segment went out once")
		Expect(l.lends).To(BeEquivalentTo(st.OutSegs), "one Lend per segment")
		Expect(l.sentLent).To(BeNumerically(">", 0))
		Expect(l.copied).To(BeNumerically(">", 0))
		Expect(st.Drops.Output).To(BeZero())
	})

	It("counts a loan the Output refuses as dropped at output (drops.output)", func() {
		h := newHarness(DefaultConfig())
		l := &lender{Output: h.out}
		h.s.out = &refusingLender{lender: l}
		_, err := h.s.Connect(0, Addr{h.local, 40000}, Addr{h.remote, 80})
		Expect(err).NotTo(HaveOccurred())
		Expect(h.s.Stats().Drops.Output).To(BeEquivalentTo(1))
		h.none()
	})

	It("carries a transfer whole between two engines that build every segment in lent buffers, under loss and corruption", func() {
		cfg := tuned(func(c *Config) {
			c.SendBuffer = 256 << 10
			c.RecvBuffer = 256 << 10
		})
		w := newWire(wireConfig{rateBps: 1e9, latency: 50 * time.Microsecond, loss: 0.02, corrupt: 0.01, reorder: 0.02,
			reorderBy: 200 * time.Microsecond, seed: 11}, [2]Config{cfg, cfg})
		var ls [2]*lender
		for i := range w.stacks {
			ls[i] = &lender{Output: w.stacks[i].out, refuse: func(k int) bool { return k%7 == 3 }}
			w.stacks[i].out = ls[i]
		}
		res := w.transfer(2<<20, time.Minute, 5)
		Expect(res.err).NotTo(HaveOccurred())
		Expect(res.done).To(BeTrue())
		Expect(res.recvHash).To(Equal(res.sentHash))
		for i, l := range ls {
			Expect(l.misuse).To(BeEmpty())
			Expect(l.sentLent + l.copied).To(BeEquivalentTo(w.stacks[i].Stats().OutSegs))
		}
	})
})

// refusingLender lends, then fails every SendLent (ending the loan) as a
// network layer whose send failed.
type refusingLender struct{ *lender }

func (r *refusingLender) SendLent(time.Duration, IP, IP, uint64, int) error {
	r.open = 0
	return errNotLent
}

// ipv6HeaderLen is the IPv6 fixed header (RFC 8200 section 3); the test
// network sends no extension headers.
const ipv6HeaderLen = 40

// ipv6Network is an IPv6 network layer for the engine: its header length
// and its pseudo-header (RFC 8200 section 8.1: source address, destination
// address, the upper-layer packet length in 32 bits, three zero bytes and
// the next header, 6), and no buffer to lend. It records every address
// it was asked to sum for, so that a spec can tell no IPv4 one reached it.
type ipv6Network struct {
	ipv4Network
	// notV6 counts PseudoHeaderSum calls with an address that is not
	// IPv6.
	notV6 *int
}

func (ipv6Network) HeaderLen() int { return ipv6HeaderLen }

func (n ipv6Network) PseudoHeaderSum(src, dst IP, length int) uint64 {
	if (!src.Is6() || !dst.Is6()) && n.notV6 != nil {
		*n.notV6++
	}
	return v6sum(src, dst, length)
}

// v6sum is the IPv6 pseudo-header sum of a TCP segment of n bytes (RFC
// 8200 section 8.1), unfolded as checksum.Add accumulates it.
func v6sum(src, dst IP, n int) uint64 {
	var ph [40]byte
	s, d := src.As16(), dst.As16()
	copy(ph[0:16], s[:])
	copy(ph[16:32], d[:])
	binary.BigEndian.PutUint32(ph[32:36], uint32(n))
	ph[39] = ProtocolNumber
	return checksum.Add(0, ph[:])
}

// wireEnd6 is one end of the test wire over ipv6Network.
type wireEnd6 struct {
	wireEnd
	net ipv6Network
}

func (e wireEnd6) HeaderLen() int { return e.net.HeaderLen() }

func (e wireEnd6) PseudoHeaderSum(src, dst IP, n int) uint64 {
	return e.net.PseudoHeaderSum(src, dst, n)
}
