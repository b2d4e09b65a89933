package icmpv6

import "github.com/savanna-sim/savanna/stack/icmp"

// The error rate limiter of RFC 4443 section 2.4 (f) is the token bucket
// of stack/icmp, driven by the caller's clock: the same algorithm (a
// bucket, as section 2.4 (f) suggests) and defaults (Linux's
// net.ipv4.icmp_msgs_per_sec 1000 and icmp_msgs_burst 50, which Linux
// applies to ICMPv6 errors as well). One Limiter may serve both families,
// as Linux's global bucket does, or each family may have its own.

// LimiterConfig sets the error rate limit. Zero fields take their
// defaults.
type LimiterConfig = icmp.LimiterConfig

// Limiter is a token bucket with explicit time: Allow(now) takes a token.
type Limiter = icmp.Limiter

// NewLimiter returns a full bucket.
func NewLimiter(cfg LimiterConfig) (*Limiter, error) { return icmp.NewLimiter(cfg) }
