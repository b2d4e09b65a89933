package icmp

import (
	"fmt"
	"time"
)

// LimiterConfig sets the error rate limit (RFC 1812 section 4.3.2.8 and
// RFC 1122 section 3.2.2 ask for one). Zero fields take their defaults.
type LimiterConfig struct {
	// Rate is the sustained errors per second (default 1000, Linux's
	// icmp_msgs_per_sec).
	Rate int `yaml:"rate"`
	// Burst is the bucket depth (default 50, Linux's icmp_msgs_burst).
	Burst int `yaml:"burst"`
	// Unlimited turns the limiter off.
	Unlimited bool `yaml:"unlimited"`
}

// WithDefaults fills zero fields.
func (c LimiterConfig) WithDefaults() LimiterConfig {
	if c.Rate == 0 {
		c.Rate = 1000
	}
	if c.Burst == 0 {
		c.Burst = 50
	}
	return c
}

// Validate reports the first invalid field by key.
func (c LimiterConfig) Validate() error {
	switch {
	case c.Rate < 0 || c.Rate > 1e9:
		return fmt.Errorf("rate: %d is outside 1..1000000000", c.Rate)
	case c.Burst < 0 || c.Burst > 1e6:
		return fmt.Errorf("burst: %d is outside 1..1000000", c.Burst)
	}
	return nil
}

// Limiter is a token bucket driven by the caller's clock: one token per
// 1/Rate seconds, at most Burst tokens, one token per error sent. Time is
// kept as credit in nanoseconds so that there is no rounding drift.
type Limiter struct {
	cfg      LimiterConfig
	interval time.Duration // time that buys one token
	credit   time.Duration // accumulated, capped at Burst × interval
	last     time.Duration
	started  bool
}

// NewLimiter returns a full bucket.
func NewLimiter(cfg LimiterConfig) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("icmp rate limit: %w", err)
	}
	cfg = cfg.WithDefaults()
	iv := time.Second / time.Duration(cfg.Rate)
	if iv <= 0 {
		iv = 1
	}
	return &Limiter{cfg: cfg, interval: iv, credit: iv * time.Duration(cfg.Burst)}, nil
}

// Allow takes a token if one is available at now.
func (l *Limiter) Allow(now time.Duration) bool {
	if l.cfg.Unlimited {
		return true
	}
	if l.started && now > l.last {
		l.credit += now - l.last
	}
	if !l.started || now > l.last {
		l.last = now
		l.started = true
	}
	if cap := l.interval * time.Duration(l.cfg.Burst); l.credit > cap {
		l.credit = cap
	}
	if l.credit < l.interval {
		return false
	}
	l.credit -= l.interval
	return true
}
