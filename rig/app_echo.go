package rig

import (
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/apps/echo"
)

// echoServerSpec is an echo-server entry: the echo server (RFC 862) as
// an event loop on each stack instance of its host, listening on ports
// consecutive ports from port.
type echoServerSpec struct {
	AppCommon `yaml:",inline"`
	Port      uint16 `yaml:"port"`
	Ports     int    `yaml:"ports"`
	Backlog   int    `yaml:"backlog"`
}

type echoServerRunner struct{ servers []*echo.StackServer }

func (r echoServerRunner) ResetStats(time.Duration) {
	for _, s := range r.servers {
		s.ResetStats()
	}
}

func (r echoServerRunner) Figures(time.Duration) any {
	out := map[string]echo.StackStats{}
	var total echo.StackStats
	for i, s := range r.servers {
		st := s.Stats()
		out[strconv.Itoa(i)] = st
		total.Accepted += st.Accepted
		total.Closed += st.Closed
		total.Open += st.Open
		total.Bytes += st.Bytes
		total.Backlogged += st.Backlogged
		total.Errors += st.Errors
	}
	return struct {
		Total       echo.StackStats            `json:"total"`
		PerInstance map[string]echo.StackStats `json:"instance"`
	}{total, out}
}

func buildEchoServer(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec echoServerSpec
	if err := w.v.Decode(key, node, &spec); err != nil {
		return "", nil, err
	}
	if spec.Port == 0 {
		spec.Port = 7
	}
	if spec.Ports == 0 {
		spec.Ports = 1
	}
	if spec.Backlog == 0 {
		spec.Backlog = 4096
	}
	hs, err := w.stackApp(h, key)
	if err != nil {
		return "", nil, err
	}
	var r echoServerRunner
	for i, in := range hs.instances {
		s, err := echo.NewStackServer(in, spec.Port, spec.Ports, spec.Backlog)
		if err != nil {
			return "", nil, w.v.Errorf(key+".ports", "%v", err)
		}
		w.attach(h.cores[hs.cores[i]], s)
		r.servers = append(r.servers, s)
	}
	return spec.Name, r, nil
}

// echoClientSpec is an echo-client entry: a echo.Pulse.
type echoClientSpec struct {
	AppCommon        `yaml:",inline"`
	echo.PulseConfig `yaml:",inline"`
	ClientApp        `yaml:",inline"`
}

type echoClientRunner struct{ p *echo.Pulse }

func (r echoClientRunner) ResetStats(time.Duration) { r.p.ResetStats() }

// Completed is the replies received in the window.
func (r echoClientRunner) Completed(time.Duration) (uint64, string) {
	return r.p.Stats().Replies, "requests"
}

func (r echoClientRunner) Figures(time.Duration) any { return r.p.Stats() }

func buildEchoClient(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec echoClientSpec
	hs, remote, err := w.clientSetup(h, key, node, &spec, 7)
	if err != nil {
		return "", nil, err
	}
	in := hs.instances[0]
	p, err := echo.NewPulse(spec.PulseConfig, in, remote, w.eng.Now())
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	w.attach(h.cores[hs.cores[0]], p)
	return spec.Name, echoClientRunner{p: p}, nil
}
