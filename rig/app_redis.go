package rig

import (
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/apps/redis"
	"github.com/savanna-sim/savanna/rig/report"
)

type redisServerSpec struct {
	AppCommon `yaml:",inline"`
	Port      uint16 `yaml:"port"`
}

type redisServerRunner struct{ servers []*redis.Server }

func (r redisServerRunner) ResetStats(time.Duration) {
	for _, s := range r.servers {
		s.ResetStats()
	}
}

// Completed is the commands the servers ran.
func (r redisServerRunner) Completed(time.Duration) (uint64, string) {
	var n uint64
	for _, s := range r.servers {
		n += s.Stats().Commands
	}
	return n, "requests"
}

func (r redisServerRunner) Figures(time.Duration) any {
	out := map[string]redis.ServerStats{}
	var total redis.ServerStats
	for i, s := range r.servers {
		st := s.Stats()
		out[strconv.Itoa(i)] = st
		total.Accepted += st.Accepted
		total.Closed += st.Closed
		total.Commands += st.Commands
		total.ProtocolErrors += st.ProtocolErrors
		total.Open += st.Open
	}
	return struct {
		Total       redis.ServerStats            `json:"total"`
		PerInstance map[string]redis.ServerStats `json:"instance"`
	}{total, out}
}

func buildRedisServer(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec redisServerSpec
	if err := w.v.Decode(key, node, &spec); err != nil {
		return "", nil, err
	}
	if spec.Port == 0 {
		spec.Port = 6379
	}
	hs, err := w.stackApp(h, key)
	if err != nil {
		return "", nil, err
	}
	var r redisServerRunner
	for i, in := range hs.instances {
		s, err := redis.NewServer(in, spec.Port, hs.store)
		if err != nil {
			return "", nil, w.v.Errorf(key+".port", "%v", err)
		}
		w.attach(h.cores[hs.cores[i]], s)
		r.servers = append(r.servers, s)
	}
	return spec.Name, r, nil
}

type redisBenchSpec struct {
	AppCommon         `yaml:",inline"`
	redis.BenchConfig `yaml:",inline"`
	ClientApp         `yaml:",inline"`
}

// redisBenchRunner drives a redis-benchmark; end is the run's end, the
// end of its active phase while it has not finished.
type redisBenchRunner struct {
	b   *redis.Benchmark
	end time.Duration
}

func (r redisBenchRunner) ResetStats(time.Duration)   { r.b.ResetStats() }
func (r redisBenchRunner) Latency() *latency.Recorder { return r.b.Latency() }

// Completed is the replies received in the window.
func (r redisBenchRunner) Completed(time.Duration) (uint64, string) {
	return r.b.Requests(), "requests"
}

// Active is the simulated time the benchmark sent its first request of
// the measured window and when its last test finished (the run's end if
// it did not); ok is false when it sent nothing in the window.
func (r redisBenchRunner) Active() (start, end time.Duration, ok bool) {
	start, end, ok, finished := r.b.Active()
	if !finished {
		end = r.end
	}
	return start, end, ok
}

func (r redisBenchRunner) Figures(now time.Duration) any {
	s := r.b.Stats(now)
	t := report.Tree{}
	t.AddStruct("", s)
	for name, c := range s.Commands {
		t.AddStruct(name, c)
	}
	return t
}

func buildRedisBenchmark(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec redisBenchSpec
	hs, remote, err := w.clientSetup(h, key, node, &spec, 6379)
	if err != nil {
		return "", nil, err
	}
	in := hs.instances[0]
	ports := rssPorts(hs.port, remote, 0)
	b, err := redis.NewBenchmark(spec.BenchConfig, in, remote, ports)
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	w.attach(h.cores[hs.cores[0]], b)
	return spec.Name, redisBenchRunner{b: b, end: w.v.File.Span()}, nil
}
