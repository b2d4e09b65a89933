package nic_test

import (
	"reflect"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/statstest"
	"github.com/savanna-sim/savanna/sim/nic"
)

var _ = Describe("Link.ResetStats", func() {
	cfg := nic.LinkConfig{
		Latency: time.Microsecond, Loss: 0.05, Duplicate: 0.03, Reorder: 0.03, Corrupt: 0.02, CRCErrors: 0.01,
		Flaps: []nic.FlapConfig{{At: 100 * time.Microsecond, DownFor: 50 * time.Microsecond, Every: 200 * time.Microsecond, Count: 3}},
	}
	newRun := func() *pair {
		return newPair(9, defaultOpts(), defaultOpts(), cfg, func(i int) []byte { return udpFrame(1518, uint32(i)) }, 2000, true)
	}
	gauges := []string{"Up"}

	It("zeroes the counters, keeps the state, and counts only what follows, down time included", func() {
		// Reset in the middle of the first flap, with frames on the wire.
		p := newRun()
		p.eng.RunUntil(120 * time.Microsecond)
		before := p.link.Stats()
		Expect(before.Up).To(BeFalse())
		Expect(before.Flaps).To(Equal(uint64(1)))
		Expect(before.DownTime).To(Equal(20 * time.Microsecond))
		Expect(before.AToB.Frames).To(BeNumerically(">", 100))
		Expect(before.AToB.Lost).To(BeNumerically(">", 0))

		p.link.ResetStats()
		after := p.link.Stats()
		Expect(statstest.Problems(before, after, gauges, nil)).To(BeEmpty())

		// The same run without a reset (the reset draws nothing from the
		// link's random stream, so it is the same run): every counter of
		// the window is the whole run's minus what the warm-up counted.
		p.eng.Run()
		window := p.link.Stats()
		q := newRun()
		q.eng.Run()
		full := q.link.Stats()
		b, f := statstest.Leaves(before), statstest.Leaves(full)
		for path, leaf := range statstest.Leaves(window) {
			if path == "Up" {
				continue
			}
			v, fv, wv := reflect.ValueOf(leaf), reflect.ValueOf(f[path]), reflect.ValueOf(b[path])
			switch v.Kind() {
			case reflect.Uint64:
				Expect(v.Uint()).To(Equal(fv.Uint()-wv.Uint()), path)
			case reflect.Int64:
				Expect(v.Int()).To(Equal(fv.Int()-wv.Int()), path)
			default:
				Fail("unexpected kind of " + path)
			}
		}
		Expect(window.Flaps).To(Equal(uint64(2)))
		Expect(window.DownTime).To(Equal(30*time.Microsecond + 2*50*time.Microsecond))
		Expect(window.Up).To(BeTrue())
	})

	It("counts down time from the reset when the link is down across the whole window", func() {
		p := newRun()
		p.link.SetUp(false)
		p.eng.RunUntil(40 * time.Microsecond)
		p.link.ResetStats()
		p.eng.RunUntil(70 * time.Microsecond)
		st := p.link.Stats()
		Expect(st.DownTime).To(Equal(30 * time.Microsecond))
		Expect(st.Flaps).To(BeZero())
		p.link.SetUp(true)
		Expect(p.link.Stats().DownTime).To(Equal(30 * time.Microsecond))
	})
})
