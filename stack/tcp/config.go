package tcp

import (
	"fmt"
	"time"
)

// Congestion control algorithm names (Config.CongestionControl).
const (
	CCNewReno = "newreno"
	CCCubic   = "cubic"
)

// Config holds a stack's tunables. Zero values mean "default" (see
// DefaultConfig and docs/tcp.md); Validate names the offending key.
type Config struct {
	// MTU of the IPv4 path; the advertised MSS is MTU-40 (RFC 9293
	// section 3.7.1, RFC 879).
	MTU int `yaml:"mtu"`
	// SendBuffer and RecvBuffer bound each connection's buffers in bytes.
	// They grow on demand up to these limits.
	SendBuffer int `yaml:"send_buffer"`
	RecvBuffer int `yaml:"recv_buffer"`
	// MaxOOORanges bounds the out-of-order queue: the number of
	// discontiguous ranges held beyond RCV.NXT. The bytes are bounded by
	// the receive window itself. Segments that would need more ranges are
	// dropped and counted (ofo_dropped).
	MaxOOORanges int `yaml:"max_ooo_ranges"`
	// MaxConns limits connections of all states (conn_limit_refused).
	MaxConns int `yaml:"max_conns"`
	// SynBacklog limits each listener's SYN queue (half-open
	// connections); beyond it SYN cookies are used when enabled.
	SynBacklog int `yaml:"syn_backlog"`
	// SynCookies enables RFC 4987 SYN cookies when a SYN queue is full.
	SynCookies *bool `yaml:"syn_cookies"`

	// InitialRTO before any RTT sample (RFC 6298 section 2.1: 1 s).
	InitialRTO time.Duration `yaml:"initial_rto"`
	// MinRTO clamps the RTO from below. RFC 6298 section 2.4 says 1 s;
	// Linux (TCP_RTO_MIN) and this default use 200 ms.
	MinRTO time.Duration `yaml:"min_rto"`
	// MaxRTO clamps backoff (RFC 6298 section 2.5 allows >= 60 s; Linux
	// uses 120 s).
	MaxRTO time.Duration `yaml:"max_rto"`
	// SynRetries: SYN retransmissions before an active open fails
	// (Linux tcp_syn_retries = 6).
	SynRetries int `yaml:"syn_retries"`
	// SynAckRetries: SYN-ACK retransmissions before a half-open
	// connection is dropped (Linux tcp_synack_retries = 5).
	SynAckRetries int `yaml:"synack_retries"`
	// MaxRetries: data retransmissions before a connection is aborted
	// (RFC 1122 4.2.3.5 R2; Linux tcp_retries2 = 15).
	MaxRetries int `yaml:"max_retries"`
	// MSL is the maximum segment lifetime; TIME-WAIT lasts 2*MSL (RFC 9293
	// section 3.4.2 suggests 2 minutes, Linux holds TIME-WAIT 60 s).
	MSL time.Duration `yaml:"msl"`
	// FinWait2Timeout ends an orphaned FIN-WAIT-2 (Linux tcp_fin_timeout).
	FinWait2Timeout time.Duration `yaml:"fin_wait2_timeout"`

	// DelayedAck enables delayed ACKs (RFC 1122 4.2.3.2, RFC 5681 4.2).
	DelayedAck *bool `yaml:"delayed_ack"`
	// DelayedAckTimeout is the delayed-ACK timer (< 500 ms by RFC 1122;
	// Linux's minimum is 40 ms).
	DelayedAckTimeout time.Duration `yaml:"delayed_ack_timeout"`

	// KeepAlive defaults for new sockets (RFC 1122 4.2.3.6): off by
	// default; idle 2 h, interval 75 s, 9 probes as Linux.
	KeepAlive         bool          `yaml:"keepalive"`
	KeepAliveIdle     time.Duration `yaml:"keepalive_idle"`
	KeepAliveInterval time.Duration `yaml:"keepalive_interval"`
	KeepAliveCount    int           `yaml:"keepalive_count"`

	// WindowScaling, Timestamps and SACK enable RFC 7323 / RFC 2018
	// options in SYNs.
	WindowScaling *bool `yaml:"window_scaling"`
	Timestamps    *bool `yaml:"timestamps"`
	SACK          *bool `yaml:"sack"`
	// TimestampTick is the timestamp clock period (RFC 7323 section 5.4:
	// 1 ms to 1 s per tick).
	TimestampTick time.Duration `yaml:"timestamp_tick"`

	// CongestionControl is "newreno" or "cubic" (default cubic, as Linux).
	CongestionControl string `yaml:"congestion_control"`
	// InitialWindow in segments (RFC 6928: 10).
	InitialWindow int `yaml:"initial_window"`
	// NoDelay disables Nagle's algorithm for new sockets (RFC 896).
	NoDelay bool `yaml:"no_delay"`

	// ChallengeAckLimit caps challenge ACKs per second (RFC 5961
	// section 7; Linux tcp_challenge_ack_limit = 1000).
	ChallengeAckLimit int `yaml:"challenge_ack_limit"`
	// ChecksumOffloadTx leaves the checksum to the NIC: only the
	// pseudo-header sum is written.
	ChecksumOffloadTx bool `yaml:"checksum_offload_tx"`
}

func boolPtr(b bool) *bool { return &b }

// DefaultConfig returns the defaults; see docs/tcp.md.
func DefaultConfig() Config {
	return Config{
		MTU:               1500,
		SendBuffer:        4 << 20,
		RecvBuffer:        6 << 20,
		MaxOOORanges:      64,
		MaxConns:          20000,
		SynBacklog:        256,
		SynCookies:        boolPtr(true),
		InitialRTO:        time.Second,
		MinRTO:            200 * time.Millisecond,
		MaxRTO:            120 * time.Second,
		SynRetries:        6,
		SynAckRetries:     5,
		MaxRetries:        15,
		MSL:               30 * time.Second,
		FinWait2Timeout:   60 * time.Second,
		DelayedAck:        boolPtr(true),
		DelayedAckTimeout: 40 * time.Millisecond,
		KeepAliveIdle:     2 * time.Hour,
		KeepAliveInterval: 75 * time.Second,
		KeepAliveCount:    9,
		WindowScaling:     boolPtr(true),
		Timestamps:        boolPtr(true),
		SACK:              boolPtr(true),
		TimestampTick:     time.Millisecond,
		CongestionControl: CCCubic,
		InitialWindow:     10,
		ChallengeAckLimit: 1000,
	}
}

// withDefaults returns c with zero fields filled from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	setI := func(v *int, dv int) {
		if *v == 0 {
			*v = dv
		}
	}
	setD := func(v *time.Duration, dv time.Duration) {
		if *v == 0 {
			*v = dv
		}
	}
	setB := func(v **bool, dv *bool) {
		if *v == nil {
			*v = dv
		}
	}
	setI(&c.MTU, d.MTU)
	setI(&c.SendBuffer, d.SendBuffer)
	setI(&c.RecvBuffer, d.RecvBuffer)
	setI(&c.MaxOOORanges, d.MaxOOORanges)
	setI(&c.MaxConns, d.MaxConns)
	setI(&c.SynBacklog, d.SynBacklog)
	setB(&c.SynCookies, d.SynCookies)
	setD(&c.InitialRTO, d.InitialRTO)
	setD(&c.MinRTO, d.MinRTO)
	setD(&c.MaxRTO, d.MaxRTO)
	setI(&c.SynRetries, d.SynRetries)
	setI(&c.SynAckRetries, d.SynAckRetries)
	setI(&c.MaxRetries, d.MaxRetries)
	setD(&c.MSL, d.MSL)
	setD(&c.FinWait2Timeout, d.FinWait2Timeout)
	setB(&c.DelayedAck, d.DelayedAck)
	setD(&c.DelayedAckTimeout, d.DelayedAckTimeout)
	setD(&c.KeepAliveIdle, d.KeepAliveIdle)
	setD(&c.KeepAliveInterval, d.KeepAliveInterval)
	setI(&c.KeepAliveCount, d.KeepAliveCount)
	setB(&c.WindowScaling, d.WindowScaling)
	setB(&c.Timestamps, d.Timestamps)
	setB(&c.SACK, d.SACK)
	setD(&c.TimestampTick, d.TimestampTick)
	if c.CongestionControl == "" {
		c.CongestionControl = d.CongestionControl
	}
	setI(&c.InitialWindow, d.InitialWindow)
	setI(&c.ChallengeAckLimit, d.ChallengeAckLimit)
	return c
}

// Validate checks the configuration after defaults are applied and names
// the offending key.
func (c Config) Validate() error {
	c = c.withDefaults()
	pos := []struct {
		key string
		v   int64
	}{
		{"mtu", int64(c.MTU)}, {"send_buffer", int64(c.SendBuffer)}, {"recv_buffer", int64(c.RecvBuffer)},
		{"max_ooo_ranges", int64(c.MaxOOORanges)}, {"max_conns", int64(c.MaxConns)},
		{"syn_backlog", int64(c.SynBacklog)}, {"initial_rto", int64(c.InitialRTO)},
		{"min_rto", int64(c.MinRTO)}, {"max_rto", int64(c.MaxRTO)}, {"syn_retries", int64(c.SynRetries)},
		{"synack_retries", int64(c.SynAckRetries)}, {"max_retries", int64(c.MaxRetries)},
		{"msl", int64(c.MSL)}, {"fin_wait2_timeout", int64(c.FinWait2Timeout)},
		{"delayed_ack_timeout", int64(c.DelayedAckTimeout)}, {"keepalive_idle", int64(c.KeepAliveIdle)},
		{"keepalive_interval", int64(c.KeepAliveInterval)}, {"keepalive_count", int64(c.KeepAliveCount)},
		{"timestamp_tick", int64(c.TimestampTick)}, {"initial_window", int64(c.InitialWindow)},
		{"challenge_ack_limit", int64(c.ChallengeAckLimit)},
	}
	for _, p := range pos {
		if p.v < 0 {
			return fmt.Errorf("tcp config: %s: %d must not be negative", p.key, p.v)
		}
	}
	if c.MTU < 68+40 || c.MTU > 65535 {
		return fmt.Errorf("tcp config: mtu: %d is outside [108, 65535]", c.MTU)
	}
	if c.SendBuffer < 2*(c.MTU-40) {
		return fmt.Errorf("tcp config: send_buffer: %d is below two segments (%d)", c.SendBuffer, 2*(c.MTU-40))
	}
	if c.RecvBuffer < 2*(c.MTU-40) {
		return fmt.Errorf("tcp config: recv_buffer: %d is below two segments (%d)", c.RecvBuffer, 2*(c.MTU-40))
	}
	if c.RecvBuffer > 1<<30 {
		return fmt.Errorf("tcp config: recv_buffer: %d exceeds the 1 GiB window scaling allows (RFC 7323 section 2.3)", c.RecvBuffer)
	}
	if c.MinRTO > c.MaxRTO {
		return fmt.Errorf("tcp config: min_rto: %v exceeds max_rto %v", c.MinRTO, c.MaxRTO)
	}
	if c.TimestampTick < time.Microsecond {
		return fmt.Errorf("tcp config: timestamp_tick: %v is below 1us", c.TimestampTick)
	}
	if c.DelayedAckTimeout >= 500*time.Millisecond {
		return fmt.Errorf("tcp config: delayed_ack_timeout: %v must be below 500ms (RFC 1122 4.2.3.2)", c.DelayedAckTimeout)
	}
	if _, err := newCC(c.CongestionControl); err != nil {
		return fmt.Errorf("tcp config: congestion_control: %w", err)
	}
	return nil
}
