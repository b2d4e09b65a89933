package checkmodel

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
)

//go:embed template.yaml
var templateText string

// scenarioParams fill template.yaml.
type scenarioParams struct {
	System      string
	ServerDesc  string
	ServerStack string
	Command     string
	Clients     int
	Requests    int
	DataSize    int
	Duration    string
	CostFile    string
}

// SimConfig is one simulated point.
type SimConfig struct {
	// System is SystemRedis (the kernel's stack under the server),
	// SystemSavanna (Savanna's user-space stack, as simrun serve runs it)
	// or SystemNginx (the model's HTTP server and wrk, template_http.yaml;
	// Command, Requests and DataSize are not used: wrk runs for the
	// window, on one page of NginxPageBytes).
	System   string
	Command  string
	Clients  int
	Requests int
	DataSize int
	// CostFile is a cost-model file for both hosts ("" for the default
	// prices).
	CostFile string
}

// simDuration bounds the simulated time a point may take: room for the
// requests at 2,000 per second, far below what either stack does at any
// point, and never under a second (1,000 clients connecting).
func simDuration(requests int) time.Duration {
	d := time.Duration(requests) * time.Second / 2000
	if d < time.Second {
		d = time.Second
	}
	return d
}

// Scenario returns the scenario file of a simulated point:
// template.yaml filled for Redis and Savanna, template_http.yaml for
// nginx.
func Scenario(c SimConfig) ([]byte, error) {
	p := scenarioParams{System: c.System, Command: strings.ToUpper(c.Command), Clients: c.Clients,
		Requests: c.Requests, DataSize: c.DataSize, Duration: simDuration(c.Requests).String()}
	if c.CostFile != "" {
		abs, err := filepath.Abs(c.CostFile)
		if err != nil {
			return nil, err
		}
		p.CostFile = fmt.Sprintf("%q", abs)
	}
	switch c.System {
	case SystemRedis:
		p.ServerStack, p.ServerDesc = "kernel", "one Redis event loop on the kernel's stack, on a core of its own"
	case SystemSavanna:
		p.ServerStack, p.ServerDesc = "lstack", "Savanna's user-space stack on one lcore with the key-value server on it, as simrun serve --app kv --cores 1 does"
	case SystemNginx:
		return httpScenario(c, p.CostFile)
	default:
		return nil, fmt.Errorf("system %q: expected %s, %s or %s", c.System, SystemRedis, SystemSavanna, SystemNginx)
	}
	return renderTemplate("template.yaml", templateText, p)
}

// renderTemplate fills a twin's scenario template; a key the template
// names that data lacks is an error, not an empty value.
func renderTemplate(name, text string, data any) ([]byte, error) {
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// RunSim runs one simulated point in-process and reads the figures the
// live run measures from its report.
func RunSim(c SimConfig) (Point, error) {
	pt := Point{System: c.System, Command: strings.ToUpper(c.Command), Clients: c.Clients}
	data, err := Scenario(c)
	if err != nil {
		return pt, err
	}
	// The generated file is parsed as if it sat beside the cost file, so
	// that the scenario may read it (a scenario reads files from its own
	// folder only).
	dir, err := os.Getwd()
	if err != nil {
		return pt, err
	}
	var allow []string
	if c.CostFile != "" {
		abs, err := filepath.Abs(c.CostFile)
		if err != nil {
			return pt, err
		}
		allow = append(allow, filepath.Dir(abs))
	}
	name := filepath.Join(dir, fmt.Sprintf("check-model-%s-%s-%d.yaml", c.System, pt.Command, c.Clients))
	s, err := scenario.ParseWith(name, data, scenario.Options{AllowPaths: allow})
	if err != nil {
		return pt, fmt.Errorf("simulated scenario: %w", err)
	}
	r, err := rig.Run(s, rig.Options{})
	if err != nil {
		return pt, fmt.Errorf("simulated run (%s %s, %d clients): %w", c.System, pt.Command, c.Clients, err)
	}
	if c.System == SystemNginx {
		return simHTTPPoint(pt, r.Figures[scenario.DefaultVariant])
	}
	return simPoint(pt, r.Figures[scenario.DefaultVariant])
}

// lookupFigure returns the number at a dotted path of a run's figures.
func lookupFigure(f report.Tree, path string) (float64, error) {
	v, ok := f.Lookup(strings.Split(path, "."))
	if !ok {
		return 0, fmt.Errorf("simulated report has no figure %s", path)
	}
	x, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("simulated figure %s is %T, not a number", path, v)
	}
	return x, nil
}

// simPoint reads a point's figures from a run's figures.
func simPoint(pt Point, f report.Tree) (Point, error) {
	get := func(path string) (float64, error) { return lookupFigure(f, path) }
	cmd := "redis_benchmark." + pt.Command + "."
	var err error
	fig := func(path string) float64 {
		v, e := get(path)
		if err == nil {
			err = e
		}
		return v
	}
	pt.RPS = fig(cmd + "rps")
	pt.MeanMS = fig(cmd + "avg_ms")
	pt.P99MS = fig(cmd + "p99_ms")
	pt.Requests = fig(cmd + "requests")
	finished := fig(cmd + "finished")
	commands := fig("redis_server.total.commands")
	serverNS := fig("server.cpu.all.busy_ns")
	clientNS := fig("client.cpu.all.busy_ns")
	if err != nil {
		return pt, err
	}
	// A poll-mode lcore's empty turns are charged too (poll_idle); live,
	// simrun serve parks an idle lcore, so they are left out.
	for _, h := range []string{"server", "client"} {
		if v, e := get(h + ".cpu.all.layers.idle_poll.ns"); e == nil {
			if h == "server" {
				serverNS -= v
			} else {
				clientNS -= v
			}
		}
	}
	if finished != 1 {
		pt.Notes = append(pt.Notes, fmt.Sprintf("simulated benchmark did not finish: %.0f replies", pt.Requests))
	}
	// The server's CPU is every core of its host (the app's and the
	// kernel's network path), over the commands it ran; the client's over
	// the replies it got, as the live run divides /proc/PID/stat's times.
	pt.ServerCPUus = perRequest(serverNS/1e3, commands)
	pt.ClientCPUus = perRequest(clientNS/1e3, pt.Requests)
	return pt, nil
}

// perRequest is total over n, NaN when nothing was counted.
func perRequest(total, n float64) float64 {
	if n <= 0 {
		return math.NaN()
	}
	return total / n
}
