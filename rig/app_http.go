package rig

import (
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	apphttp "github.com/savanna-sim/savanna/apps/http"
	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/zlibshim"
)

type httpSpec struct {
	AppCommon            `yaml:",inline"`
	apphttp.ServerConfig `yaml:",inline"`
}

type httpRunner struct {
	s *apphttp.Server
	// threads are the workers as the scheduler sees them, one per site,
	// for the host's load average.
	threads []*appThread
}

func (r httpRunner) ResetStats(now time.Duration) {
	r.s.ResetStats()
	for _, t := range r.threads {
		t.ResetStats(now)
	}
}

// Threads implements threadedApp.
func (r httpRunner) Threads() []*appThread { return r.threads }

func (r httpRunner) Completed(time.Duration) (uint64, string) {
	return r.s.Stats().Requests, "requests"
}

// ShimFallbacks is the hardware failures of every worker's shim process,
// current, draining and exited.
func (r httpRunner) ShimFallbacks() uint64 {
	var n uint64
	for _, p := range r.s.Processes() {
		n += p.Stats().Fallbacks.Total()
	}
	return n
}

func (r httpRunner) Figures(time.Duration) any {
	t := report.Tree{}
	t.AddStruct("server", r.s.Stats())
	for _, p := range r.s.Processes() {
		st := p.Stats()
		t.Accumulate("shim", st)
		t.AddStruct("shim_by_pid."+strconv.Itoa(int(p.PID())), st)
	}
	return t
}

func buildHTTP(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec httpSpec
	hs, err := w.stackAppSetup(h, key, node, &spec)
	if err != nil {
		return "", nil, err
	}
	pages := spec.Pages
	if len(pages) == 0 {
		pages = []int{16 << 10, 64 << 10, 128 << 10}
	}
	var corpus *apphttp.Corpus
	if w.opts.checkOnly {
		// Check never serves a page: an empty page of each size
		// stands in for up to 64 MiB of generated HTML (the sizes are
		// still checked by the server's config).
		corpus = &apphttp.Corpus{Pages: make([][]byte, len(pages))}
	} else {
		corpus = apphttp.NewCorpus(w.eng.RNG("corpus:"+h.name), pages)
	}
	var svc hw.CompressService
	if h.qat != nil {
		svc = h.qat
	}
	factory := func(site, worker int, cfg zlibshim.Config) (*zlibshim.Process, error) {
		core := h.cores[hs.cores[site]]
		pid := hw.ProcessID(worker)
		if h.qat != nil {
			h.qat.BindProcess(pid, w.appMeter(core, "qat_driver"))
		}
		return zlibshim.NewProcess(svc, pid, w.appMeter(core, "zlibshim"), cfg)
	}
	s, err := apphttp.NewServer(spec.ServerConfig, hs.instances, corpus, factory)
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	r := httpRunner{s: s}
	for i, site := range s.Sites() {
		// A site is one worker process's event loop (a reload's old
		// and new workers on a site share it: one thread's load).
		core := h.cores[hs.cores[i]]
		t := newAppThread(site, core)
		r.threads = append(r.threads, t)
		w.attach(core, t)
	}
	h.reload = func() error { return s.Reload(w.eng.Now()) }
	return spec.Name, r, nil
}

type wrkSpec struct {
	AppCommon         `yaml:",inline"`
	apphttp.WrkConfig `yaml:",inline"`
	ClientApp         `yaml:",inline"`
}

// wrkRunner drives a wrk; end is the run's end, where its active phase
// ends (wrk never finishes by itself).
type wrkRunner struct {
	w   *apphttp.Wrk
	end time.Duration
}

// Active is the simulated time wrk started sending in the measured
// window (the window's start if it was sending already) and the run's
// end; ok is false when it sent nothing.
func (r wrkRunner) Active() (start, end time.Duration, ok bool) {
	start, ok = r.w.Active()
	return start, r.end, ok
}

func (r wrkRunner) ResetStats(now time.Duration)  { r.w.ResetStats(now) }
func (r wrkRunner) Figures(now time.Duration) any { return r.w.Stats(now) }
func (r wrkRunner) Latency() *latency.Recorder    { return r.w.Latency() }
func (r wrkRunner) Completed(time.Duration) (uint64, string) {
	return r.w.Requests(), "requests"
}

func buildWrk(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec wrkSpec
	hs, remote, err := w.clientSetup(h, key, node, &spec, 80)
	if err != nil {
		return "", nil, err
	}
	in := hs.instances[0]
	g, err := apphttp.NewWrk(spec.WrkConfig, in, remote, rssPorts(hs.port, remote, 0))
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	w.attach(h.cores[hs.cores[0]], g)
	return spec.Name, wrkRunner{w: g, end: w.v.File.Span()}, nil
}
