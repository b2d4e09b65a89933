package livetest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Prometheus is a Prometheus server (Debian's prometheus package) running
// inside a namespace on loopback, with a temporary configuration and
// storage, scraping one target every second.
type Prometheus struct {
	*Proc
	ns   string
	addr string
}

// StartPrometheus starts prometheus in ns, listening on listen (e.g.
// 127.0.0.1:9090) and scraping target (e.g. 127.0.0.1:9464) every
// second, with its configuration and storage under dir; it lives at most
// limit and waits until /-/ready answers (up to 60 s). Stop it with Stop.
func StartPrometheus(ns, dir, listen, target string, limit time.Duration) (*Prometheus, error) {
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"+
		"  - job_name: savanna\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	p, err := StartInNetns(ns, limit, "prometheus", "--config.file="+cfg,
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+listen, "--log.level=warn")
	if err != nil {
		return nil, err
	}
	pr := &Prometheus{Proc: p, ns: ns, addr: listen}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := HTTPGetInNetns(ns, "http://"+listen+"/-/ready", 2*time.Second); err == nil {
			return pr, nil
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("prometheus exited: %v\n%s", p.err, p.Output())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = p.Stop()
			return nil, fmt.Errorf("prometheus not ready within 60 s:\n%s", p.Output())
		}
	}
}

// Query evaluates an instant PromQL query through the HTTP API
// (/api/v1/query) and returns the value of its single sample; ok is
// false when the result is empty (nothing scraped yet).
func (p *Prometheus) Query(q string) (v float64, ok bool, err error) {
	body, err := HTTPGetInNetns(p.ns, "http://"+p.addr+"/api/v1/query?query="+url.QueryEscape(q), 10*time.Second)
	if err != nil {
		return 0, false, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return 0, false, fmt.Errorf("query %s: %w: %s", q, err, body)
	}
	if r.Status != "success" {
		return 0, false, fmt.Errorf("query %s: %s", q, r.Error)
	}
	switch len(r.Data.Result) {
	case 0:
		return 0, false, nil
	case 1:
	default:
		return 0, false, fmt.Errorf("query %s: %d samples, want one: %s", q, len(r.Data.Result), body)
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err = strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false, fmt.Errorf("query %s: value %q: %w", q, s, err)
	}
	return v, true, nil
}
