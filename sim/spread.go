package sim

import (
	"math"
	"math/rand/v2"

	"github.com/savanna-sim/savanna/hw"
)

// Spread gives, per operation, the coefficient of variation of a mean-1
// multiplier drawn for each charge of that operation on a core: the
// service-time variability of real work (a dict lookup that misses the
// cache, a wake-up that meets a busy runqueue). sim/cost builds it from a
// cost file's spread fields; 0 draws nothing.
type Spread [hw.NumCostOps]float64

// spreadState is a core's draw of spread multipliers: the lognormal's
// parameters per op and the core's own random stream.
//
// The multiplier is lognormal, exp(mu + sigma*Z), with sigma^2 =
// ln(1 + cv^2) and mu = -sigma^2/2, so that its mean is exactly 1 and its
// coefficient of variation cv: a price stays the mean of what the op
// costs, so throughput over many charges is unchanged. Lognormal because
// a service time is positive and right-skewed (a miss adds time, nothing
// makes the work faster than its cached path), and because independent
// slowdowns compose by multiplication, which keeps a product of
// lognormals lognormal.
type spreadState struct {
	rng       *rand.Rand
	mu, sigma [hw.NumCostOps]float64
}

func newSpreadState(s *Spread, rng *rand.Rand) *spreadState {
	st := &spreadState{rng: rng}
	for op, cv := range s {
		if cv > 0 {
			v := math.Log1p(cv * cv)
			st.sigma[op] = math.Sqrt(v)
			st.mu[op] = -v / 2
		}
	}
	return st
}

// scale returns ps times one draw of op's multiplier.
func (st *spreadState) scale(op hw.CostOp, ps int64) int64 {
	m := math.Exp(st.mu[op] + st.sigma[op]*st.rng.NormFloat64())
	return int64(float64(ps)*m + 0.5)
}

// SetSpread makes every charge of an op with a spread above 0 cost its
// price times a seeded mean-1 multiplier drawn from rng, the core's own
// stream (the rig names it from the engine's seed, the host and the CPU,
// so the same scenario and seed draw the same multipliers). A nil s, or
// one without a spread above 0, draws nothing: a core then charges
// exactly its prices.
func (c *Core) SetSpread(s *Spread, rng *rand.Rand) {
	c.spread = nil
	if s == nil || rng == nil {
		return
	}
	for _, cv := range s {
		if cv > 0 {
			c.spread = newSpreadState(s, rng)
			return
		}
	}
}
