package sockring_test

import (
	"bytes"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/stack/sockring"
)

var _ = Describe("a socket's byte ring", func() {
	It("keeps bytes in order across the storage's wrap-around", func() {
		r := sockring.NewRing(1024, nil)
		var want, got []byte
		buf := make([]byte, 700)
		for i := 0; i < 50; i++ {
			p := bytes.Repeat([]byte{byte(i)}, 300+i)
			n := r.Write(p, 0)
			want = append(want, p[:n]...)
			m := r.Read(buf)
			got = append(got, buf[:m]...)
		}
		for r.Len() > 0 {
			m := r.Read(buf)
			got = append(got, buf[:m]...)
		}
		Expect(got).To(Equal(want))
		Expect(len(want)).To(BeNumerically(">", 10*1024), "the ring wrapped many times")
	})

	It("allocates lazily, grows only while empty and never past its size", func() {
		r := sockring.NewRing(1<<16, nil)
		Expect(r.Space()).To(Equal(1 << 16))
		Expect(r.Write([]byte("hi"), 0)).To(Equal(2))
		Expect(r.Space()).To(Equal(sockring.MinStorage - 2))
		// Not empty: a larger write does not regrow under the reader.
		Expect(r.Write(make([]byte, 200), 0)).To(Equal(sockring.MinStorage - 2))
		r.Read(make([]byte, 1024))
		Expect(r.Write(make([]byte, 200), 0)).To(Equal(200), "empty again: it grew to fit")
		Expect(r.Space()).To(Equal(256 - 200))
		r.Read(make([]byte, 1024))
		r.Reserve(1 << 20)
		Expect(r.Space()).To(Equal(1 << 16))
	})

	It("hides scheduled bytes until the producer's time in virtual time", func() {
		eng := sim.NewEngine(1)
		var woke []time.Duration
		h := simhost.NewHandoff(eng, func(at time.Duration) { woke = append(woke, at) })
		r := sockring.NewRing(1024, h)
		Expect(r.Write([]byte("abc"), 5*time.Microsecond)).To(Equal(3))
		Expect(r.Len()).To(BeZero())
		Expect(r.InFlight()).To(Equal(3))
		Expect(r.Space()).To(Equal(sockring.MinStorage-3), "the producer counts what it wrote")
		eng.RunUntil(5*time.Microsecond - 1)
		Expect(r.Read(make([]byte, 8))).To(BeZero(), "not before the producer's clock")
		Expect(woke).To(BeEmpty())
		eng.RunUntil(5 * time.Microsecond)
		Expect(r.Len()).To(Equal(3))
		Expect(r.InFlight()).To(BeZero())
		Expect(woke).To(Equal([]time.Duration{5 * time.Microsecond}))
	})

	It("shows scheduled bytes to a consumer whose clock passed the producer's, and rings no doorbell for them", func() {
		eng := sim.NewEngine(1)
		var woke []time.Duration
		r := sockring.NewRing(1024, simhost.NewHandoff(eng, func(at time.Duration) { woke = append(woke, at) }))
		r.Write([]byte("abc"), 5*time.Microsecond)
		r.Write([]byte("de"), 9*time.Microsecond)
		r.Sync(5*time.Microsecond - 1)
		Expect(r.Len()).To(BeZero(), "a consumer at t-1 sees nothing")
		r.Sync(7 * time.Microsecond)
		Expect(r.Len()).To(Equal(3), "a consumer at 7 us sees what was written at 5 us, not at 9 us")
		eng.RunUntil(5 * time.Microsecond)
		Expect(woke).To(BeEmpty(), "the consumer saw them already")
		eng.RunUntil(9 * time.Microsecond)
		Expect(r.Len()).To(Equal(5))
		Expect(woke).To(Equal([]time.Duration{9 * time.Microsecond}))
	})

	It("hands a call over no earlier than its producer made it", func() {
		eng := sim.NewEngine(1)
		var woke []time.Duration
		c := sockring.NewCalls(simhost.NewHandoff(eng, func(at time.Duration) { woke = append(woke, at) }))
		c.Post(3 * time.Microsecond)
		c.Post(4 * time.Microsecond)
		Expect(c.Arrived()).To(BeZero())
		Expect(c.InFlight()).To(Equal(2))
		eng.RunUntil(3 * time.Microsecond)
		Expect(c.Take()).To(Equal(1))
		c.Sync(4 * time.Microsecond)
		Expect(c.Take()).To(Equal(1))
		eng.RunUntil(4 * time.Microsecond)
		Expect(c.Arrived()).To(BeZero())
		Expect(woke).To(Equal([]time.Duration{3 * time.Microsecond}))
	})

	It("publishes at once without a hand-off, and ignores a stale publication", func() {
		r := sockring.NewRing(1024, nil)
		r.Write([]byte("abcd"), 0)
		Expect(r.Len()).To(Equal(4))
		r.Publish(2)
		Expect(r.Len()).To(Equal(4))
	})
})
