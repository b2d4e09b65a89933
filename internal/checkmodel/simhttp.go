package checkmodel

import (
	_ "embed"
	"fmt"
	"time"

	"github.com/savanna-sim/savanna/rig/report"
)

//go:embed template_http.yaml
var httpTemplateText string

// The nginx twin's simulated time: a warm-up for the connections'
// handshakes and first requests (1,000 connections take a few
// milliseconds), then a window of steady state long enough for some
// 10,000 responses at the slowest point the model gives (one connection,
// a round trip of tens of microseconds).
const (
	httpSimWarmup = 100 * time.Millisecond
	httpSimWindow = time.Second
)

// httpParams fill template_http.yaml.
type httpParams struct {
	Clients   int
	PageBytes int
	Duration  string
	Warmup    string
	CostFile  string
}

// httpScenario renders the nginx twin. costFile is quoted and absolute
// already ("" for the default prices).
func httpScenario(c SimConfig, costFile string) ([]byte, error) {
	p := httpParams{Clients: c.Clients, PageBytes: NginxPageBytes, Duration: httpSimWindow.String(),
		Warmup: httpSimWarmup.String(), CostFile: costFile}
	return renderTemplate("template_http.yaml", httpTemplateText, p)
}

// simHTTPPoint reads the nginx twin's figures: wrk's throughput and
// latency over the window, each host's CPU over the requests its
// program handled (the server's over the HTTP server's requests, the
// client's over wrk's responses), as the live run divides its CPU times.
func simHTTPPoint(pt Point, f report.Tree) (Point, error) {
	var err error
	fig := func(path string) float64 {
		v, e := lookupFigure(f, path)
		if err == nil {
			err = e
		}
		return v
	}
	pt.RPS = fig("wrk.rps")
	pt.MeanMS = littleMeanMS(pt.Clients, pt.RPS) // as the live point's (livewrk.go)
	pt.P99MS = fig("wrk.latency.p99_us") / 1e3
	pt.Requests = fig("wrk.requests")
	ok2xx := fig("wrk.status_2xx")
	sockErrs := fig("wrk.socket_errors") + fig("wrk.connect_failures") + fig("wrk.lost")
	served := fig("http.server.requests")
	serverNS := fig("server.cpu.all.busy_ns")
	clientNS := fig("client.cpu.all.busy_ns")
	if err != nil {
		return pt, err
	}
	if ok2xx != pt.Requests {
		pt.Notes = append(pt.Notes, fmt.Sprintf("simulated wrk: %.0f of %.0f responses 2xx", ok2xx, pt.Requests))
	}
	if sockErrs > 0 {
		pt.Notes = append(pt.Notes, fmt.Sprintf("simulated wrk: %.0f socket errors, failed connects and lost requests", sockErrs))
	}
	pt.ServerCPUus = perRequest(serverNS/1e3, served)
	pt.ClientCPUus = perRequest(clientNS/1e3, pt.Requests)
	return pt, nil
}
