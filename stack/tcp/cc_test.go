package tcp

import (
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// ackRounds feeds a controller one round trip at a time: cwnd/mss ACKs of
// one segment each, spread over the RTT.
func ackRounds(cc congestionControl, s *ccState, now *time.Duration, rtt time.Duration, rounds int) {
	for r := 0; r < rounds; r++ {
		n := s.cwnd / s.mss
		if n < 1 {
			n = 1
		}
		for i := 0; i < n; i++ {
			*now += rtt / time.Duration(n)
			cc.onAck(s, *now, s.mss, s.cwnd)
		}
	}
}

var _ = Describe("Congestion control", func() {
	const mss = 1000
	It("NewReno doubles per RTT in slow start and adds one MSS per RTT after (RFC 5681)", func() {
		cc := &newReno{}
		s := ccState{mss: mss}
		cc.init(&s, 10)
		now := time.Duration(0)
		ackRounds(cc, &s, &now, time.Millisecond, 3)
		Expect(s.cwnd).To(Equal(80 * mss))
		cc.onLoss(&s, now, 80*mss)
		Expect(s.ssthresh).To(Equal(40 * mss))
		s.cwnd = s.ssthresh
		ackRounds(cc, &s, &now, time.Millisecond, 5)
		Expect(s.cwnd).To(Equal(45 * mss))
		cc.onRTO(&s, now, 45*mss)
		Expect(s.cwnd).To(Equal(mss))
		Expect(s.ssthresh).To(Equal(22*mss + mss/2))
	})

	It("CUBIC reduces by beta 0.7 and regrows along the cubic to W_max at K (RFC 9438 sections 4.2, 4.6)", func() {
		cc := &cubic{}
		s := ccState{mss: mss, srtt: 100 * time.Millisecond}
		cc.init(&s, 10)
		s.cwnd = 100 * mss
		s.ssthresh = 100 * mss
		cc.onLoss(&s, 0, s.cwnd)
		Expect(s.ssthresh).To(Equal(70 * mss))
		Expect(cc.wMax).To(BeNumerically("~", 100, 1e-9))
		s.cwnd = s.ssthresh
		now := time.Duration(0)
		ackRounds(cc, &s, &now, 100*time.Millisecond, 1)
		k := math.Cbrt(30 / cubicC)
		Expect(cc.k).To(BeNumerically("~", k, 1e-9))
		// Run to t = K: the window is back near W_max (concave region,
		// then the plateau).
		ackRounds(cc, &s, &now, 100*time.Millisecond, int(k*10)-1)
		Expect(float64(s.cwnd) / mss).To(BeNumerically("~", 100, 4))
		// Convex region: past K it grows beyond W_max.
		ackRounds(cc, &s, &now, 100*time.Millisecond, 40)
		want := cc.wCubic((now - cc.epochStart).Seconds()) // about 0.4*4^3 + 100
		Expect(want).To(BeNumerically(">", 120))
		Expect(float64(s.cwnd) / mss).To(BeNumerically("~", want, 3))
	})

	It("CUBIC follows the Reno-friendly estimate on short RTTs (RFC 9438 section 4.3)", func() {
		cc := &cubic{}
		s := ccState{mss: mss, srtt: time.Millisecond}
		cc.init(&s, 10)
		s.cwnd, s.ssthresh = 100*mss, 100*mss
		cc.onLoss(&s, 0, s.cwnd)
		s.cwnd = s.ssthresh
		now := time.Duration(0)
		ackRounds(cc, &s, &now, time.Millisecond, 100)
		// W_est grows by alpha_cubic (about 0.53) segments per RTT.
		west := 70 + 100*cubicAlpha
		Expect(float64(s.cwnd) / mss).To(BeNumerically("~", west, 3))
		Expect(float64(s.cwnd) / mss).To(BeNumerically(">", cc.wCubic((now).Seconds())))
	})

	It("CUBIC fast convergence lowers W_max when a loss comes below the previous W_max (section 4.7)", func() {
		cc := &cubic{}
		s := ccState{mss: mss, srtt: 10 * time.Millisecond}
		cc.init(&s, 10)
		s.cwnd = 100 * mss
		cc.onLoss(&s, 0, s.cwnd)
		s.cwnd = 80 * mss
		cc.onLoss(&s, time.Second, s.cwnd)
		Expect(cc.wMax).To(BeNumerically("~", 80*(1+cubicBeta)/2, 1e-9))
		Expect(s.ssthresh).To(Equal(56 * mss))
	})
})
