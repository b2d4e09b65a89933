package rig

import (
	"errors"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// tcpTunables is the scenario schema of hosts.H.stack.tunables: TCP's
// settings by their keys in docs/tcp.md. It is not tcp.Config: every
// field is optional, so that a key left out keeps tcp.DefaultConfig's
// value and one written, even as 0 or false, is taken as written (and
// refused by tcp.Config.Validate where it means nothing).
type tcpTunables struct {
	MTU             *int    `yaml:"mtu"`
	SendBuffer      *int    `yaml:"send_buffer"`
	RecvBuffer      *int    `yaml:"recv_buffer"`
	MaxOOORanges    *int    `yaml:"max_ooo_ranges"`
	MaxConns        *int    `yaml:"max_conns"`
	ConnLimitAction *string `yaml:"conn_limit_action"`
	// Mem is tcp_mem: [low, pressure, high] in bytes, as Linux's
	// net.ipv4.tcp_mem lists its three (tcpConfig checks the count).
	Mem               *[]int64       `yaml:"tcp_mem"`
	SynBacklog        *int           `yaml:"syn_backlog"`
	SynCookies        *bool          `yaml:"syn_cookies"`
	InitialRTO        *time.Duration `yaml:"initial_rto"`
	MinRTO            *time.Duration `yaml:"min_rto"`
	MaxRTO            *time.Duration `yaml:"max_rto"`
	SynRetries        *int           `yaml:"syn_retries"`
	SynAckRetries     *int           `yaml:"synack_retries"`
	MaxRetries        *int           `yaml:"max_retries"`
	MSL               *time.Duration `yaml:"msl"`
	FinWait2Timeout   *time.Duration `yaml:"fin_wait2_timeout"`
	DelayedAck        *bool          `yaml:"delayed_ack"`
	DelayedAckTimeout *time.Duration `yaml:"delayed_ack_timeout"`
	KeepAlive         *bool          `yaml:"keepalive"`
	KeepAliveIdle     *time.Duration `yaml:"keepalive_idle"`
	KeepAliveInterval *time.Duration `yaml:"keepalive_interval"`
	KeepAliveCount    *int           `yaml:"keepalive_count"`
	WindowScaling     *bool          `yaml:"window_scaling"`
	Timestamps        *bool          `yaml:"timestamps"`
	SACK              *bool          `yaml:"sack"`
	TimestampTick     *time.Duration `yaml:"timestamp_tick"`
	CongestionControl *string        `yaml:"congestion_control"`
	InitialWindow     *int           `yaml:"initial_window"`
	NoDelay           *bool          `yaml:"no_delay"`
	ChallengeAckLimit *int           `yaml:"challenge_ack_limit"`
	InvalidRateLimit  *time.Duration `yaml:"invalid_ratelimit"`
	RSTRateLimit      *int           `yaml:"rst_rate_limit"`
	ChecksumOffloadTx *bool          `yaml:"checksum_offload_tx"`
}

// applyTo overwrites the fields of c whose keys the scenario sets.
func (t *tcpTunables) applyTo(c *tcp.Config) {
	set(&c.MTU, t.MTU)
	set(&c.SendBuffer, t.SendBuffer)
	set(&c.RecvBuffer, t.RecvBuffer)
	set(&c.MaxOOORanges, t.MaxOOORanges)
	set(&c.MaxConns, t.MaxConns)
	set(&c.ConnLimitAction, t.ConnLimitAction)
	if t.Mem != nil && len(*t.Mem) == 3 {
		m := *t.Mem
		c.Mem = tcp.MemLimits{Low: m[0], Pressure: m[1], High: m[2]}
	}
	set(&c.SynBacklog, t.SynBacklog)
	set(&c.SynCookies, t.SynCookies)
	set(&c.InitialRTO, t.InitialRTO)
	set(&c.MinRTO, t.MinRTO)
	set(&c.MaxRTO, t.MaxRTO)
	set(&c.SynRetries, t.SynRetries)
	set(&c.SynAckRetries, t.SynAckRetries)
	set(&c.MaxRetries, t.MaxRetries)
	set(&c.MSL, t.MSL)
	set(&c.FinWait2Timeout, t.FinWait2Timeout)
	set(&c.DelayedAck, t.DelayedAck)
	set(&c.DelayedAckTimeout, t.DelayedAckTimeout)
	set(&c.KeepAlive, t.KeepAlive)
	set(&c.KeepAliveIdle, t.KeepAliveIdle)
	set(&c.KeepAliveInterval, t.KeepAliveInterval)
	set(&c.KeepAliveCount, t.KeepAliveCount)
	set(&c.WindowScaling, t.WindowScaling)
	set(&c.Timestamps, t.Timestamps)
	set(&c.SACK, t.SACK)
	set(&c.TimestampTick, t.TimestampTick)
	set(&c.CongestionControl, t.CongestionControl)
	set(&c.InitialWindow, t.InitialWindow)
	set(&c.NoDelay, t.NoDelay)
	set(&c.ChallengeAckLimit, t.ChallengeAckLimit)
	set(&c.InvalidRateLimit, t.InvalidRateLimit)
	set(&c.RSTRateLimit, t.RSTRateLimit)
	set(&c.ChecksumOffloadTx, t.ChecksumOffloadTx)
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// tcpConfig is the host's TCP configuration: tcp.DefaultConfig with the
// stack's tunables (key is hosts.H.stack), then its congestion and
// max_connections keys, over it. Errors name the key at fault where it
// is written.
func (w *world) tcpConfig(key string, st *scenario.Stack) (tcp.Config, error) {
	cfg := tcp.DefaultConfig()
	tkey := key + ".tunables"
	var t tcpTunables
	if len(st.Tunables) > 0 {
		// The scenario keeps tunables as a map of value nodes; the
		// mapping rebuilt from it puts each key where the file has it,
		// so that an unknown key is reported there.
		node := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range sortedKeys(st.Tunables) {
			v := st.Tunables[k]
			line, col := w.position(tkey+"."+k, v)
			node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: line, Column: col}, &v)
		}
		if err := w.v.Decode(tkey, node, &t); err != nil {
			return cfg, err
		}
	}
	if t.Mem != nil && len(*t.Mem) != 3 {
		return cfg, w.v.Errorf(tkey+".tcp_mem", "%d values given; tcp_mem is [low, pressure, high] in bytes, as Linux's net.ipv4.tcp_mem", len(*t.Mem))
	}
	t.applyTo(&cfg)
	if st.Congestion != "" {
		cfg.CongestionControl = st.Congestion
	}
	if st.MaxConnections > 0 {
		cfg.MaxConns = st.MaxConnections
	}
	if err := cfg.Validate(); err != nil {
		at := tkey
		var ce *tcp.ConfigError
		if errors.As(err, &ce) {
			switch {
			case ce.Key == "congestion_control" && st.Congestion != "":
				at = key + ".congestion"
			case ce.Key == "max_conns" && st.MaxConnections > 0:
				at = key + ".max_connections"
			case st.Tunables[ce.Key].Kind != 0:
				at = tkey + "." + ce.Key
			}
		}
		return cfg, w.v.Errorf(at, "%v", err)
	}
	return cfg, nil
}

// position is where the file writes the key at path, or, when it cannot
// be told, where its value v is.
func (w *world) position(path string, v yaml.Node) (line, col int) {
	var e *yamlstrict.Error
	if errors.As(w.v.Errorf(path, ""), &e) && e.Line > 0 {
		return e.Line, e.Col
	}
	return v.Line, v.Column
}
