package control

import (
	"encoding/json"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/rt"
)

// Totals is CmdShow's answer: what simrun serve prints when it exits,
// taken now.
type Totals struct {
	// App is the application's name ("kv", "echo").
	App string `json:"app"`
	// UptimeSeconds is the time since serve started.
	UptimeSeconds float64 `json:"uptime_seconds"`
	// Runtime is the runtime's counters (rt.Runtime.Survey).
	Runtime rt.Snapshot `json:"runtime"`
	// XStats holds the port's non-zero xstats by name.
	XStats map[string]uint64 `json:"xstats"`
	// AppStats is the application's Stats as JSON.
	AppStats json.RawMessage `json:"app_stats"`
}

// Socket is one row of CmdSockets' answer (see tcp.SocketInfo and
// rt.SocketRow for what each figure is).
type Socket struct {
	Lcore     int    `json:"lcore"`
	Local     string `json:"local"`
	Remote    string `json:"remote,omitempty"`
	State     string `json:"state"`
	SendQueue int    `json:"send_queue_bytes"`
	RecvQueue int    `json:"recv_queue_bytes"`
	RxRing    int    `json:"rx_ring_bytes"`
	TxRing    int    `json:"tx_ring_bytes"`
	Unacked   int    `json:"unacked_bytes"`
	SRTTNanos int64  `json:"srtt_ns"`
	RTONanos  int64  `json:"rto_ns"`
	Cwnd      int    `json:"cwnd_bytes"`
	Ssthresh  int    `json:"ssthresh_bytes"`
	MSS       int    `json:"mss"`
	SndWnd    int    `json:"snd_wnd_bytes"`
}

// Sockets is CmdSockets' answer.
type Sockets struct {
	Sockets []Socket `json:"sockets"`
}

// SocketsFrom converts a runtime's listing. For a listener, SendQueue
// and RecvQueue are its backlog and accept queue, as in ss.
func SocketsFrom(rows []rt.SocketRow) Sockets {
	out := Sockets{Sockets: make([]Socket, 0, len(rows))}
	for _, r := range rows {
		s := Socket{Lcore: r.Lcore, Local: r.Local.String(), State: r.State.String(),
			SendQueue: r.SendQueue, RecvQueue: r.RecvQueue, RxRing: r.RxRing, TxRing: r.TxRing,
			Unacked: r.Unacked, SRTTNanos: int64(r.SRTT), RTONanos: int64(r.RTO),
			Cwnd: r.Cwnd, Ssthresh: r.Ssthresh, MSS: r.MSS, SndWnd: r.SndWnd}
		if r.Remote.Port != 0 {
			s.Remote = r.Remote.String()
		}
		out.Sockets = append(out.Sockets, s)
	}
	return out
}

// Percentile is one point of a latency distribution.
type Percentile struct {
	Percentile float64 `json:"percentile"`
	Nanos      int64   `json:"ns"`
}

// Latency is CmdLatency's answer: the distribution of read latency as
// stack/gonet.ReadLatency defines it, since serve started.
type Latency struct {
	// Enabled is false when serve records no latency.
	Enabled bool `json:"enabled"`
	// What says what is measured, for a reader of the JSON alone.
	What        string       `json:"what"`
	Count       int64        `json:"count"`
	MinNanos    int64        `json:"min_ns"`
	MeanNanos   float64      `json:"mean_ns"`
	MaxNanos    int64        `json:"max_ns"`
	Percentiles []Percentile `json:"percentiles"`
}

// LatencyWhat is Latency.What.
const LatencyWhat = "time from bytes entering a socket's empty receive ring to the application's Read that takes them"

// LatencyPercentiles are the percentiles Latency reports.
var latencyPercentiles = []float64{50, 90, 99, 99.9, 99.99}

// LatencyFrom summarises a histogram in nanoseconds; nil means latency
// is not recorded.
func LatencyFrom(h *hdr.Histogram) Latency {
	l := Latency{What: LatencyWhat, Percentiles: []Percentile{}}
	if h == nil {
		return l
	}
	l.Enabled = true
	l.Count = h.TotalCount()
	if l.Count == 0 {
		return l
	}
	l.MinNanos, l.MeanNanos, l.MaxNanos = h.Min(), h.Mean(), h.Max()
	for _, p := range latencyPercentiles {
		l.Percentiles = append(l.Percentiles, Percentile{Percentile: p, Nanos: h.ValueAtQuantile(p)})
	}
	return l
}

// XStat is one extended statistic.
type XStat struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// XStats is CmdXStats' answer: every xstat in the driver's order, zeros
// included (rte_eth_xstats_get).
type XStats struct {
	XStats []XStat `json:"xstats"`
}

// XStatsFrom converts a port's xstats.
func XStatsFrom(xs []hw.XStat) XStats {
	out := XStats{XStats: make([]XStat, len(xs))}
	for i, x := range xs {
		out.XStats[i] = XStat{x.Name, x.Value}
	}
	return out
}

// LogLevel is CmdSetLogLevel's answer.
type LogLevel struct {
	Level    string `json:"level"`
	Previous string `json:"previous"`
}
