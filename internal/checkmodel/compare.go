package checkmodel

import "math"

// Figure names one compared figure.
type Figure string

// The figures compared per point, in table order.
const (
	FigRPS       Figure = "throughput (req/s)"
	FigMean      Figure = "mean latency (ms)"
	FigP99       Figure = "p99 latency (ms)"
	FigTail      Figure = "p99/mean"
	FigServerCPU Figure = "server CPU/request (us)"
	FigClientCPU Figure = "client CPU/request (us)"
)

// Figures lists every compared figure in table order.
func Figures() []Figure {
	return []Figure{FigRPS, FigMean, FigP99, FigTail, FigServerCPU, FigClientCPU}
}

// Band is the relative error a figure must stay within at a number of
// clients, issue 18's "What it must show": at 1 client, latency within
// ±15%; at 10 to 1,000 clients, throughput within ±25% and CPU per request
// within ±20%; p99/mean within ±30% everywhere. 0 means the issue sets no
// band for the figure there (it is shown, not marked).
func Band(f Figure, clients int) float64 {
	switch f {
	case FigMean:
		if clients == 1 {
			return 0.15
		}
	case FigRPS:
		if clients >= 10 {
			return 0.25
		}
	case FigServerCPU, FigClientCPU:
		if clients >= 10 {
			return 0.20
		}
	case FigTail:
		return 0.30
	}
	return 0
}

// Mark is a row's verdict.
type Mark string

// The marks of a row.
const (
	MarkWithin Mark = "within"
	MarkMiss   Mark = "MISS"
	// MarkNoBand: the issue sets no band for this figure at this point.
	MarkNoBand Mark = "-"
	// MarkNoData: a side has no usable figure (not measured, zero, NaN).
	MarkNoData Mark = "no data"
)

// Row is one figure of one point, real beside simulated.
type Row struct {
	System  string
	Command string
	Clients int
	Figure  Figure
	Real    float64
	Sim     float64
	// Err is Sim/Real - 1 (NaN without data).
	Err  float64
	Band float64
	Mark Mark
}

// value returns a point's figure.
func value(p Point, f Figure) float64 {
	switch f {
	case FigRPS:
		return p.RPS
	case FigMean:
		return p.MeanMS
	case FigP99:
		return p.P99MS
	case FigTail:
		if p.MeanMS <= 0 {
			return math.NaN()
		}
		return p.P99MS / p.MeanMS
	case FigServerCPU:
		return p.ServerCPUus
	case FigClientCPU:
		return p.ClientCPUus
	}
	return math.NaN()
}

// usable says a figure can be compared: positive and finite.
func usable(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// Compare returns the rows of one point, real against simulated, every
// figure of Figures in order. A miss stays a row with its error; nothing
// is dropped.
func Compare(real, sim Point) []Row {
	var rows []Row
	for _, f := range Figures() {
		r := Row{System: real.System, Command: real.Command, Clients: real.Clients, Figure: f,
			Real: value(real, f), Sim: value(sim, f), Band: Band(f, real.Clients), Err: math.NaN()}
		switch {
		case !usable(r.Real) || !usable(r.Sim):
			r.Mark = MarkNoData
		default:
			r.Err = r.Sim/r.Real - 1
			switch {
			case r.Band == 0:
				r.Mark = MarkNoBand
			case math.Abs(r.Err) <= r.Band:
				r.Mark = MarkWithin
			default:
				r.Mark = MarkMiss
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// Tally counts the rows with a band: within it, missing it, and without
// data where a band applies.
type Tally struct{ Within, Miss, NoData int }

// Count tallies rows.
func Count(rows []Row) Tally {
	var t Tally
	for _, r := range rows {
		switch {
		case r.Mark == MarkWithin:
			t.Within++
		case r.Mark == MarkMiss:
			t.Miss++
		case r.Mark == MarkNoData && r.Band > 0:
			t.NoData++
		}
	}
	return t
}
