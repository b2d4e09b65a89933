package tcp

import (
	"errors"
	"math/rand/v2"
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/checksum"
)

// captured is one segment the engine under test emitted.
type captured struct {
	at  time.Duration
	src IP
	dst IP
	Repr
}

// ipv4Network is the network side of the test Outputs: IPv4's header
// length and pseudo-header (RFC 9293 section 3.1), and no buffer to lend,
// so that the engine builds every segment in its own buffer and hands it
// to SendSegment.
type ipv4Network struct{}

// ipv4HeaderLen is the IPv4 header without options (RFC 791).
const ipv4HeaderLen = 20

var errNotLent = errors.New("test output: nothing was lent")

func (ipv4Network) HeaderLen() int { return ipv4HeaderLen }

func (ipv4Network) PseudoHeaderSum(src, dst IP, n int) uint64 { return v4sum(src, dst, n) }

func (ipv4Network) Lend(int) ([]byte, uint64) { return nil, 0 }

func (ipv4Network) SendLent(time.Duration, IP, IP, uint64, int) error { return errNotLent }

// v4sum is the IPv4 pseudo-header sum of a TCP segment of n bytes.
func v4sum(src, dst IP, n int) uint64 {
	return checksum.PseudoHeaderV4(src.As4(), dst.As4(), ProtocolNumber, n)
}

// setV4Checksum sets seg's checksum under the IPv4 pseudo-header.
func setV4Checksum(seg []byte, src, dst IP) { SetChecksum(seg, v4sum(src, dst, len(seg))) }

// capture is a test Output that parses and keeps every segment.
type capture struct {
	ipv4Network
	segs []captured
	now  *time.Duration
}

func (c *capture) SendSegment(now time.Duration, src, dst IP, seg []byte) error {
	b := append([]byte(nil), seg...)
	Expect(VerifyChecksum(b, v4sum(src, dst, len(b)))).To(BeTrue(), "emitted segment has a bad checksum")
	r, err := Parse(b)
	Expect(err).NotTo(HaveOccurred())
	c.segs = append(c.segs, captured{at: now, src: src, dst: dst, Repr: r})
	return nil
}

// harness drives one engine packet by packet: the test plays the peer.
type harness struct {
	s      *Stack
	out    *capture
	now    time.Duration
	local  IP
	remote IP
	lport  uint16
	rport  uint16
	// The peer's view of the connection.
	peerISS   Seq
	peerNxt   Seq // next sequence number the peer sends
	ourISS    Seq
	peerTS    uint32
	ts        bool
	lastOurTS uint32
}

func newHarness(cfg Config) *harness {
	h := &harness{local: IPFrom4([4]byte{10, 0, 0, 1}), remote: IPFrom4([4]byte{10, 0, 0, 2}), lport: 80, rport: 40000, peerISS: 1000, peerTS: 5000}
	h.out = &capture{now: &h.now}
	s, err := New(cfg, rand.New(rand.NewPCG(1, 2)), h.out)
	Expect(err).NotTo(HaveOccurred())
	h.s = s
	return h
}

// inject delivers a segment from the peer at the current time.
func (h *harness) inject(r Repr) {
	if r.SrcPort == 0 {
		r.SrcPort = h.rport
	}
	if r.DstPort == 0 {
		r.DstPort = h.lport
	}
	b := make([]byte, r.HeaderLen()+len(r.Payload))
	hl := r.Emit(b)
	copy(b[hl:], r.Payload)
	setV4Checksum(b, h.remote, h.local)
	h.s.Input(h.now, h.remote, h.local, b)
	h.s.Poll(h.now)
}

// advance moves time forward by d, running every timer on the way.
func (h *harness) advance(d time.Duration) {
	end := h.now + d
	for {
		next := h.s.Poll(h.now)
		if next > end {
			break
		}
		if next > h.now {
			h.now = next
		}
		h.s.Poll(h.now)
	}
	h.now = end
	h.s.Poll(h.now)
}

// take returns and forgets the captured segments.
func (h *harness) take() []captured {
	s := h.out.segs
	h.out.segs = nil
	for _, c := range s {
		if c.HasTS {
			h.lastOurTS = c.TSVal
		}
	}
	return s
}

// one expects exactly one emitted segment and returns it.
func (h *harness) one() captured {
	s := h.take()
	ExpectWithOffset(1, s).To(HaveLen(1), "segments: %v", describe(s))
	return s[0]
}

func (h *harness) none() {
	s := h.take()
	ExpectWithOffset(1, s).To(BeEmpty(), "segments: %v", describe(s))
}

func describe(s []captured) []string {
	var out []string
	for _, c := range s {
		out = append(out, c.at.String()+" "+c.Flags.String()+" seq="+itoa(int64(c.Seq))+" ack="+itoa(int64(c.Ack))+
			" win="+itoa(int64(c.Window))+" len="+itoa(int64(len(c.Payload))))
	}
	return out
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	var b []byte
	for v > 0 {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

// peerOpts are the options the scripted peer puts in its SYN.
type peerOpts struct {
	mss    uint16
	ws     int // -1: none
	sack   bool
	ts     bool
	window uint16
}

func defaultPeer() peerOpts { return peerOpts{mss: 1460, ws: 7, sack: true, ts: true, window: 65535} }

func (p peerOpts) apply(r *Repr, h *harness) {
	r.MSS = p.mss
	if p.ws >= 0 {
		r.HasWScale, r.WScale = true, uint8(p.ws)
	}
	r.SACKPermitted = p.sack
	if p.ts {
		r.HasTS, r.TSVal = true, h.peerTS
	}
	r.Window = p.window
}

// ack builds a segment from the peer acknowledging ack, carrying data.
func (h *harness) seg(flags Flags, ack Seq, data []byte) Repr {
	r := Repr{Seq: h.peerNxt, Ack: ack, Flags: flags, Window: 65535, Payload: data}
	if h.ts {
		h.peerTS++
		r.HasTS, r.TSVal = true, h.peerTS
		r.TSEcr = h.lastTSVal()
	}
	return r
}

func (h *harness) lastTSVal() uint32 { return h.lastOurTS }

// established opens a passive connection with the given peer options and
// returns the accepted Conn. The SYN-ACK and everything else emitted is
// consumed.
func (h *harness) established(p peerOpts) *Conn {
	l, err := h.s.Listen(h.local, h.lport, 16)
	Expect(err).NotTo(HaveOccurred())
	h.ts = p.ts
	syn := Repr{Seq: h.peerISS, Flags: FlagSYN}
	p.apply(&syn, h)
	h.inject(syn)
	sa := h.one()
	Expect(sa.Flags).To(Equal(FlagSYN | FlagACK))
	h.ourISS = sa.Seq
	h.lastOurTS = sa.TSVal
	h.peerNxt = h.peerISS + 1
	h.advance(10 * time.Millisecond)
	a := h.seg(FlagACK, h.ourISS+1, nil)
	a.Window = p.window
	h.inject(a)
	h.none()
	c, ok := l.Accept()
	Expect(ok).To(BeTrue())
	Expect(c.State()).To(Equal(StateEstablished))
	return c
}
