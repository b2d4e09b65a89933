package tcp

import (
	"bytes"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("direct receiver (SetDirectReceiver)", func() {
	It("hands in-order bytes to the receiver, keeps what it refuses, and the stream stays whole", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		var direct bytes.Buffer
		room := 700
		c.SetDirectReceiver(func(p []byte) int {
			n := min(room, len(p))
			direct.Write(p[:n])
			room -= n
			return n
		})
		ack := h.ourISS + 1
		data := pattern(1000)
		h.inject(h.seg(FlagACK|FlagPSH, ack, data[:600]))
		h.peerNxt += 600
		Expect(direct.Len()).To(Equal(600))
		Expect(c.RecvBuffered()).To(BeZero())
		// The receiver has room for 100 more: the rest waits in the buffer,
		// and the next segment follows it there (the receiver only takes
		// bytes while the buffer is empty, so the order is kept).
		h.inject(h.seg(FlagACK|FlagPSH, ack, data[600:800]))
		h.peerNxt += 200
		room = 1000
		h.inject(h.seg(FlagACK|FlagPSH, ack, data[800:]))
		h.peerNxt += 200
		Expect(direct.Len()).To(Equal(700))
		Expect(c.RecvBuffered()).To(Equal(300))
		rest := make([]byte, 400)
		n, err := c.Read(rest)
		Expect(err).NotTo(HaveOccurred())
		Expect(append(direct.Bytes(), rest[:n]...)).To(Equal(data))
		Expect(c.Info().State).To(Equal("ESTABLISHED"))
		h.advance(h.s.Config().DelayedAckTimeout)
		acks := h.take()
		Expect(acks).NotTo(BeEmpty())
		Expect(acks[len(acks)-1].Ack).To(Equal(h.peerNxt))
	})

	It("takes nothing out of order: a hole's data waits in the buffer", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		var direct bytes.Buffer
		c.SetDirectReceiver(func(p []byte) int { direct.Write(p); return len(p) })
		ack := h.ourISS + 1
		data := pattern(300)
		late := h.seg(FlagACK, ack, data[:100])
		h.peerNxt += 100
		h.inject(h.seg(FlagACK, ack, data[100:]))
		Expect(direct.Len()).To(BeZero())
		h.inject(late)
		// The hole filled: the filler joins the data beyond it in the
		// buffer, so everything is there, in order.
		Expect(direct.Len()).To(BeZero())
		Expect(c.RecvBuffered()).To(Equal(300))
		got := make([]byte, 300)
		n, _ := c.Read(got)
		Expect(append(direct.Bytes(), got[:n]...)).To(Equal(data))
	})
})
