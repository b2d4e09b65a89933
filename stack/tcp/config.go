package tcp

import (
	"fmt"
	"time"
)

// What a listener does with a SYN past the connection limit
// (Config.ConnLimitAction).
const (
	// ConnLimitRST answers it with a RST, as Linux answers a SYN no
	// socket takes (RFC 9293 section 3.10.7.1): the client's connect
	// fails at once with "connection refused".
	ConnLimitRST = "rst"
	// ConnLimitDrop drops it silently, as Gazelle's lstack does past
	// max_connections: the client retries its SYN until its own
	// timeout.
	ConnLimitDrop = "drop"
)

// Congestion control algorithm names (Config.CongestionControl).
const (
	CCNewReno = "newreno"
	CCCubic   = "cubic"
)

// Config holds a stack's tunables. Every value is used as given: start
// from DefaultConfig and change what differs. A 0 is 0 (syn_retries 0: no
// SYN retransmission; challenge_ack_limit 0: no challenge ACKs), and
// where 0 means nothing Validate refuses it. The keys named in the
// comments are those of docs/tcp.md, which Validate's errors use.
type Config struct {
	// MTU of the path: the largest datagram the network layer sends. The
	// MSS advertised is the MTU less the network header (the Output's
	// HeaderLen: 20 for IPv4) and the TCP header (RFC 9293 section
	// 3.7.1, RFC 879).
	MTU int
	// SendBuffer and RecvBuffer bound each connection's buffers in bytes
	// (at least two segments). They grow on demand up to these limits.
	SendBuffer int
	RecvBuffer int
	// MaxOOORanges bounds the out-of-order queue: the number of
	// discontiguous ranges held beyond RCV.NXT (at least 1). The bytes are
	// bounded by the receive window itself. Segments that would need more
	// ranges are dropped and counted (ofo_dropped).
	MaxOOORanges int
	// MaxConns limits connections of all states, at least 1
	// (conn_limit_refused).
	MaxConns int
	// ConnLimitAction is what a listener does with a SYN past MaxConns
	// or the process's ConnBudget: ConnLimitRST (the default) or
	// ConnLimitDrop (conn_limit_action).
	ConnLimitAction string
	// Mem is the memory budget of the stack's buffers (tcp_mem: low,
	// pressure, high in bytes, Linux's net.ipv4.tcp_mem shape; 0 <= low
	// <= pressure <= high, high above 0). A process whose stacks share
	// one budget (SetMemBudget) takes the limits of the budget it made.
	Mem MemLimits
	// SynBacklog limits each listener's SYN queue (half-open
	// connections); beyond it SYN cookies are used when enabled. 0 holds
	// none: every SYN gets a cookie (or is dropped without cookies).
	SynBacklog int
	// SynCookies enables RFC 4987 SYN cookies when a SYN queue is full.
	SynCookies bool

	// InitialRTO before any RTT sample (RFC 6298 section 2.1: 1 s).
	InitialRTO time.Duration
	// MinRTO clamps the RTO from below. RFC 6298 section 2.4 says 1 s;
	// Linux (TCP_RTO_MIN) and this default use 200 ms.
	MinRTO time.Duration
	// MaxRTO clamps backoff (RFC 6298 section 2.5 allows >= 60 s; Linux
	// uses 120 s).
	MaxRTO time.Duration
	// SynRetries: SYN retransmissions before an active open fails
	// (Linux tcp_syn_retries = 6); 0 fails it at the first RTO.
	SynRetries int
	// SynAckRetries: SYN-ACK retransmissions before a half-open
	// connection is dropped (Linux tcp_synack_retries = 5); 0 drops it
	// at the first RTO.
	SynAckRetries int
	// MaxRetries: data retransmissions before a connection is aborted
	// (RFC 1122 4.2.3.5 R2; Linux tcp_retries2 = 15); 0 aborts it at the
	// first RTO.
	MaxRetries int
	// MSL is the maximum segment lifetime; TIME-WAIT lasts 2*MSL (RFC 9293
	// section 3.4.2 suggests 2 minutes, Linux holds TIME-WAIT 60 s).
	MSL time.Duration
	// FinWait2Timeout ends an orphaned FIN-WAIT-2 (Linux tcp_fin_timeout).
	FinWait2Timeout time.Duration

	// DelayedAck enables delayed ACKs (RFC 1122 4.2.3.2, RFC 5681 4.2).
	DelayedAck bool
	// DelayedAckTimeout is the delayed-ACK timer (above 0 and below
	// 500 ms by RFC 1122; Linux's minimum is 40 ms).
	DelayedAckTimeout time.Duration

	// KeepAlive, KeepAliveIdle, KeepAliveInterval and KeepAliveCount
	// are the keep-alive defaults of new sockets (RFC 1122 4.2.3.6): off;
	// idle 2 h, interval 75 s, 9 probes (at least 1) as Linux.
	KeepAlive         bool
	KeepAliveIdle     time.Duration
	KeepAliveInterval time.Duration
	KeepAliveCount    int

	// WindowScaling, Timestamps and SACK offer RFC 7323 / RFC 2018
	// options in SYNs.
	WindowScaling bool
	Timestamps    bool
	SACK          bool
	// TimestampTick is the timestamp clock period (RFC 7323 section 5.4:
	// 1 ms to 1 s per tick).
	TimestampTick time.Duration

	// CongestionControl is "newreno" or "cubic" (default cubic, as Linux).
	CongestionControl string
	// InitialWindow in segments (RFC 6928: 10; at least 1).
	InitialWindow int
	// NoDelay disables Nagle's algorithm for new sockets (RFC 896).
	NoDelay bool

	// ChallengeAckLimit caps challenge ACKs per second (RFC 5961
	// section 7; Linux tcp_challenge_ack_limit = 1000); 0 sends none.
	ChallengeAckLimit int
	// InvalidRateLimit is the least time between two ACKs a connection
	// sends to invalid segments: out of window, PAWS-rejected, and
	// challenge ACKs before ChallengeAckLimit applies (Linux's
	// tcp_invalid_ratelimit, 500 ms, per socket, tcp_oow_rate_limited;
	// segments with data and no SYN are exempt, being no ACK loop). 0
	// sets no limit.
	InvalidRateLimit time.Duration
	// RSTRateLimit caps the RSTs per second the stack sends for segments
	// that have no connection (closed ports, refused SYNs, stray ACKs in
	// LISTEN), a token bucket as deep as one second of the rate:
	// FreeBSD's net.inet.icmp.icmplim (200), which limits closed-port
	// RSTs with ICMP errors (badport_bandlim). 0 sends none.
	RSTRateLimit int
	// ChecksumOffloadTx leaves the checksum to the NIC: only the
	// pseudo-header sum is written.
	ChecksumOffloadTx bool
}

// DefaultConfig returns every tunable at its default (docs/tcp.md):
// Linux's values where Linux has one.
func DefaultConfig() Config {
	return Config{
		MTU:               1500,
		SendBuffer:        4 << 20,
		RecvBuffer:        6 << 20,
		MaxOOORanges:      64,
		MaxConns:          20000,
		ConnLimitAction:   ConnLimitRST,
		Mem:               DefaultMemLimits(),
		SynBacklog:        256,
		SynCookies:        true,
		InitialRTO:        time.Second,
		MinRTO:            200 * time.Millisecond,
		MaxRTO:            120 * time.Second,
		SynRetries:        6,
		SynAckRetries:     5,
		MaxRetries:        15,
		MSL:               30 * time.Second,
		FinWait2Timeout:   60 * time.Second,
		DelayedAck:        true,
		DelayedAckTimeout: 40 * time.Millisecond,
		KeepAlive:         false,
		KeepAliveIdle:     2 * time.Hour,
		KeepAliveInterval: 75 * time.Second,
		KeepAliveCount:    9,
		WindowScaling:     true,
		Timestamps:        true,
		SACK:              true,
		TimestampTick:     time.Millisecond,
		CongestionControl: CCCubic,
		InitialWindow:     10,
		NoDelay:           false,
		ChallengeAckLimit: 1000,
		InvalidRateLimit:  500 * time.Millisecond,
		RSTRateLimit:      200,
		ChecksumOffloadTx: false,
	}
}

// ConfigError is a tunable that Validate refuses.
type ConfigError struct {
	// Key is the tunable's key in docs/tcp.md ("syn_retries").
	Key string
	// Msg says what is wrong and what is valid.
	Msg string
}

// Error gives the key and the message: "tcp config: KEY: MSG".
func (e *ConfigError) Error() string { return "tcp config: " + e.Key + ": " + e.Msg }

func configErr(key, format string, args ...any) error {
	return &ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// The MTU's arithmetic. Validate has no network layer to ask for the
// length of its header, so it checks with the shortest header a segment
// travels behind, IPv4's without options (RFC 791): a longer one (IPv6's
// 40 bytes, RFC 8200) only makes segments smaller, so the buffer limits
// Validate accepts hold on every network. New checks the MTU again with
// the Output's own HeaderLen (mssBehind).
const (
	// minNetHeaderLen is the shortest network header: IPv4's, 20 bytes.
	minNetHeaderLen = 20
	// minMSS is the smallest MSS the MTU must leave: 68 bytes, the
	// datagram RFC 791 has every module pass unfragmented, taken as the
	// floor of a segment.
	minMSS = 68
	// maxMTU is the largest MTU: a datagram length field's 16 bits.
	maxMTU = 65535
)

// Validate checks every value as given and names the offending key (the
// error is a *ConfigError).
func (c Config) Validate() error {
	if lo := minMSS + minNetHeaderLen + HeaderLen; c.MTU < lo || c.MTU > maxMTU {
		return configErr("mtu", "%d is outside [%d, %d]", c.MTU, lo, maxMTU)
	}
	// Two segments of the largest MSS any network layer leaves.
	seg := c.MTU - minNetHeaderLen - HeaderLen
	if c.SendBuffer < 2*seg {
		return configErr("send_buffer", "%d is below two segments (%d)", c.SendBuffer, 2*seg)
	}
	if c.RecvBuffer < 2*seg {
		return configErr("recv_buffer", "%d is below two segments (%d)", c.RecvBuffer, 2*seg)
	}
	if c.RecvBuffer > 1<<30 {
		return configErr("recv_buffer", "%d exceeds the 1 GiB window scaling allows (RFC 7323 section 2.3)", c.RecvBuffer)
	}
	if c.SendBuffer > 1<<30 {
		// The buffers' offsets are 32-bit (ring); Linux's tcp_wmem
		// maximum is 4 MiB.
		return configErr("send_buffer", "%d exceeds 1 GiB, the most a connection's buffer holds", c.SendBuffer)
	}
	// Counts: min is the smallest meaningful value.
	counts := []struct {
		key string
		v   int
		min int
	}{
		{"max_ooo_ranges", c.MaxOOORanges, 1}, {"max_conns", c.MaxConns, 1},
		{"syn_backlog", c.SynBacklog, 0}, {"syn_retries", c.SynRetries, 0},
		{"synack_retries", c.SynAckRetries, 0}, {"max_retries", c.MaxRetries, 0},
		{"keepalive_count", c.KeepAliveCount, 1}, {"initial_window", c.InitialWindow, 1},
		{"challenge_ack_limit", c.ChallengeAckLimit, 0},
		{"rst_rate_limit", c.RSTRateLimit, 0},
	}
	for _, p := range counts {
		switch {
		case p.v < 0:
			return configErr(p.key, "%d must not be negative", p.v)
		case p.v < p.min:
			return configErr(p.key, "%d must be at least %d", p.v, p.min)
		}
	}
	// Durations: each must be above 0.
	durs := []struct {
		key string
		v   time.Duration
	}{
		{"initial_rto", c.InitialRTO}, {"min_rto", c.MinRTO}, {"max_rto", c.MaxRTO},
		{"msl", c.MSL}, {"fin_wait2_timeout", c.FinWait2Timeout},
		{"delayed_ack_timeout", c.DelayedAckTimeout}, {"keepalive_idle", c.KeepAliveIdle},
		{"keepalive_interval", c.KeepAliveInterval},
	}
	for _, p := range durs {
		switch {
		case p.v < 0:
			return configErr(p.key, "%v must not be negative", p.v)
		case p.v == 0:
			return configErr(p.key, "%v must be above 0s", p.v)
		}
	}
	if c.InvalidRateLimit < 0 {
		return configErr("invalid_ratelimit", "%v must not be negative", c.InvalidRateLimit)
	}
	if c.ConnLimitAction != ConnLimitRST && c.ConnLimitAction != ConnLimitDrop {
		return configErr("conn_limit_action", "%q is neither %q nor %q", c.ConnLimitAction, ConnLimitRST, ConnLimitDrop)
	}
	if m := c.Mem; m.Low < 0 || m.Low > m.Pressure || m.Pressure > m.High || m.High <= 0 {
		return configErr("tcp_mem", "[%d, %d, %d] must be low, pressure, high in bytes with 0 <= low <= pressure <= high and high above 0", m.Low, m.Pressure, m.High)
	}
	if c.MinRTO > c.MaxRTO {
		return configErr("min_rto", "%v exceeds max_rto %v", c.MinRTO, c.MaxRTO)
	}
	if c.TimestampTick < time.Microsecond {
		return configErr("timestamp_tick", "%v is below 1us", c.TimestampTick)
	}
	if c.DelayedAckTimeout >= 500*time.Millisecond {
		return configErr("delayed_ack_timeout", "%v must be below 500ms (RFC 1122 4.2.3.2)", c.DelayedAckTimeout)
	}
	if _, err := newCC(c.CongestionControl); err != nil {
		return configErr("congestion_control", "%v", err)
	}
	return nil
}

// mssBehind returns the MSS the MTU leaves behind a network header of
// netHdr bytes and the TCP header (RFC 9293 section 3.7.1): the MSS a
// Stack over that network advertises. It refuses a header shorter than
// the one Validate assumed and an MSS below minMSS (at the key mtu).
func (c Config) mssBehind(netHdr int) (int, error) {
	if netHdr < minNetHeaderLen {
		return 0, fmt.Errorf("tcp: a network header of %d bytes is shorter than the %d Config.Validate assumes", netHdr, minNetHeaderLen)
	}
	mss := c.MTU - netHdr - HeaderLen
	if mss < minMSS {
		return 0, configErr("mtu", "%d leaves an MSS of %d behind a %d-byte network header (at least %d needed)", c.MTU, mss, netHdr, minMSS)
	}
	return mss, nil
}
