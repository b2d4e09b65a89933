package tcp

import (
	"time"
	"unsafe"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Specs of what a connection allocates only when it needs it and frees
// when it no longer does (docs/performance.md, "Memory per connection"):
// an idle connection of a million holds none of it.
var _ = Describe("Per-connection memory allocated on first use", func() {
	var (
		h *harness
		c *Conn
	)
	BeforeEach(func() {
		h = newHarness(DefaultConfig())
		c = h.established(defaultPeer())
	})

	It("holds no buffer, range list or options while idle", func() {
		Expect(c.sndBuf.buf).To(BeNil())
		Expect(c.rcvBuf.buf).To(BeNil())
		Expect(c.ooo.r).To(BeNil())
		Expect(c.sb.r).To(BeNil())
		Expect(c.opts).To(BeNil())
	})

	It("allocates the out-of-order range list at the first hole and frees it when the hole fills", func() {
		first, second := pattern(100), pattern(100)
		// The second segment first: a hole at the first's place.
		r := h.seg(FlagACK, h.base(), second)
		r.Seq = h.peerNxt.Add(len(first))
		h.inject(r)
		Expect(c.ooo.r).NotTo(BeNil())
		Expect(c.ooo.r).To(HaveLen(1))
		h.peerSend(FlagACK, h.base(), first)
		h.peerNxt = h.peerNxt.Add(len(second))
		Expect(c.RecvBuffered()).To(Equal(200))
		Expect(c.ooo.r).To(BeNil(), "the list is freed once the last hole fills")
	})

	It("allocates the SACK scoreboard at the first SACK block and frees it when the cumulative ACK passes it", func() {
		S := func(i int) Seq { return h.base().Add(i * segSize) }
		_, _ = c.Write(pattern(4 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(4))
		Expect(c.sb.r).To(BeNil())
		// Segment 0 lost, 1 received: the peer SACKs it.
		r := h.seg(FlagACK, S(0), nil)
		r.NumSACK = copy(r.SACK[:], []SACKBlock{{S(1), S(2)}})
		h.inject(r)
		Expect(c.sb.r).To(HaveLen(1))
		h.peerSend(FlagACK, S(4), nil)
		Expect(c.sb.r).To(BeNil(), "the scoreboard is freed once nothing above SND.UNA is SACKed")
	})

	It("allocates its options only when one differs from the stack's", func() {
		c.SetEventHook(nil)
		c.SetDirectReceiver(nil)
		c.SetKeepAlive(true, 0, 0, 0)
		Expect(c.opts).To(BeNil(), "nothing set that the stack's Config does not already say")
		c.SetKeepAlive(true, time.Minute, 0, 0)
		Expect(c.opts).NotTo(BeNil())
		Expect(c.keepIdle()).To(Equal(time.Minute))
		Expect(c.keepIntvl()).To(Equal(h.s.cfg.KeepAliveInterval))
		Expect(c.keepCount()).To(Equal(h.s.cfg.KeepAliveCount))
	})

	It("keeps the connection's state within 576 bytes, one allocation size class", func() {
		// Go's size classes step from 512 to 576 to 640 bytes: a field
		// that pushes the TCB past 576 costs a million connections 64 MB.
		Expect(int(unsafe.Sizeof(Conn{}))).To(BeNumerically("<=", 576))
	})
})
