//go:build !dpdk

// Like serve_test.go, whose live helpers it uses, this file is left out
// of -tags dpdk builds.

package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/internal/qatdev"
)

// liveSimrun is the simrun binary the live specs run as separate
// processes (the device process must be one, stopped by its PID).
func liveSimrun() string {
	liveOnce.Do(func() { liveBin, _, liveErr = livetest.BuildSimrun("SAVANNA_SIMRUN") })
	Expect(liveErr).NotTo(HaveOccurred())
	return liveBin
}

// device is a `simrun qat serve` process.
type device struct {
	bin, socket string
	cmd         *exec.Cmd
	out         syncBuffer
}

// startDevice runs `simrun qat serve --socket DIR/qat.sock ARGS` and
// waits until it answers stats; it is stopped by its PID at cleanup.
func startDevice(dir string, args ...string) *device {
	d := &device{bin: liveSimrun(), socket: filepath.Join(dir, "qat.sock")}
	d.cmd = exec.Command(d.bin, append([]string{"qat", "serve", "--socket", d.socket, "--json"}, args...)...)
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	Expect(d.cmd.Start()).To(Succeed())
	DeferCleanup(d.stop)
	Eventually(func() error { _, err := qatdev.QueryStats(d.socket); return err }, 10*time.Second, 50*time.Millisecond).
		Should(Succeed(), "the device process did not answer: %s", d.out.String())
	return d
}

// stop ends the device process by its PID (SIGTERM: it prints its
// statistics and exits).
func (d *device) stop() {
	if d.cmd.ProcessState != nil {
		return
	}
	_ = syscall.Kill(d.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(d.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// stats is `simrun qat stats --socket S --json`, parsed.
func (d *device) stats() qatdev.Telemetry {
	out, err := exec.Command(d.bin, "qat", "stats", "--socket", d.socket, "--json").Output()
	Expect(err).NotTo(HaveOccurred())
	var t qatdev.Telemetry
	Expect(json.Unmarshal(out, &t)).To(Succeed())
	return t
}

// nginxSite is an nginx prefix with pages and a configuration, served
// through `simrun exec`.
type nginxSite struct {
	nginx, prefix, conf, pidFile, stats string
	port                                int
	pages                               map[string][]byte
	cmd                                 *exec.Cmd
	out                                 syncBuffer
}

// newNginxSite writes the pages (text that compresses as HTML does, as
// the spec in exec_test.go) and a configuration of 4 workers with gzip on
// and reuseport, so that each worker has its own listening socket and
// connections are spread across all of them. sndbuf is small so that a
// client that stops reading holds its worker's response (and so the
// worker) until it reads again.
func newNginxSite() *nginxSite {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		nginx = "/usr/sbin/nginx"
		if _, err := os.Stat(nginx); err != nil {
			Skip("nginx not installed (apt-get install -y nginx)")
		}
	}
	if os.Geteuid() != 0 {
		Skip("nginx's master needs root here")
	}
	s := &nginxSite{nginx: nginx, prefix: GinkgoT().TempDir(), pages: map[string][]byte{}}
	for _, d := range []string{"html", "logs", "tmp"} {
		Expect(os.MkdirAll(filepath.Join(s.prefix, d), 0o755)).To(Succeed())
	}
	for i, n := range []int{100, 5_000, 70_000, 300_000, 4_000_000} {
		var b bytes.Buffer
		for j := 0; b.Len() < n; j++ {
			fmt.Fprintf(&b, "<p class=\"row%d\">savanna page %d line %d %x</p>\n", j%7, i, j, j*2654435761%4093)
		}
		name := fmt.Sprintf("p%d.html", i)
		s.pages[name] = b.Bytes()[:n]
		Expect(os.WriteFile(filepath.Join(s.prefix, "html", name), s.pages[name], 0o644)).To(Succeed())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.pidFile = filepath.Join(s.prefix, "nginx.pid")
	s.stats = filepath.Join(s.prefix, "stats.jsonl")
	s.conf = filepath.Join(s.prefix, "nginx.conf")
	Expect(os.WriteFile(s.conf, []byte(fmt.Sprintf(`user root;
worker_processes 4;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log info;
events { worker_connections 256; }
http {
    access_log off;
    types { text/html html; }
    client_body_temp_path %[1]s/tmp/body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
    gzip on;
    gzip_comp_level 1;
    gzip_types text/html;
    server {
        listen 127.0.0.1:%[2]d reuseport sndbuf=16k;
        root %[1]s/html;
    }
}
`, s.prefix, s.port)), 0o644)).To(Succeed())
	return s
}

// start runs nginx through `simrun exec --qat SOCKET --stats-file` with
// the drop-in's policy (SAVANNA_ZLIB_POLICY) and waits until it listens.
func (s *nginxSite) start(dropin, socket, policy string) {
	s.cmd = exec.Command(liveSimrun(), "exec", "--dropin", dropin, "--qat", socket, "--stats", "--stats-file", s.stats, "--",
		s.nginx, "-p", s.prefix, "-c", s.conf, "-e", filepath.Join(s.prefix, "logs", "error.log"))
	s.cmd.Env = append(os.Environ(), "SAVANNA_ZLIB_POLICY="+policy)
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	Expect(s.cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		if s.cmd.ProcessState == nil {
			if pid, err := s.masterPID(); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			_ = s.cmd.Wait()
		}
	})
	Eventually(func() error {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
		if err == nil {
			c.Close()
		}
		return err
	}, 15*time.Second, 100*time.Millisecond).Should(Succeed(), "nginx did not listen: %s", s.out.String())
	Eventually(s.masterPID, 5*time.Second, 50*time.Millisecond).Should(BeNumerically(">", 0))
	Eventually(func() []int { return childrenOf(s.mustMaster()) }, 10*time.Second, 50*time.Millisecond).Should(HaveLen(4))
}

func (s *nginxSite) masterPID() (int, error) {
	b, err := os.ReadFile(s.pidFile)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func (s *nginxSite) mustMaster() int {
	pid, err := s.masterPID()
	Expect(err).NotTo(HaveOccurred())
	return pid
}

// reload is `nginx -s reload` with the same prefix and configuration.
func (s *nginxSite) reload() {
	out, err := exec.Command(s.nginx, "-p", s.prefix, "-c", s.conf, "-s", "reload").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "nginx -s reload: %s", out)
}

// stop sends SIGQUIT to the master (by the PID in its pid file): workers
// finish, exit and write their counters; simrun exec then exits.
func (s *nginxSite) stop() {
	Expect(syscall.Kill(s.mustMaster(), syscall.SIGQUIT)).To(Succeed())
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		Expect(err).NotTo(HaveOccurred(), s.out.String())
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(s.mustMaster(), syscall.SIGKILL)
		<-done
		Fail("nginx did not stop within 30 s of SIGQUIT")
	}
}

// childrenOf lists the live processes whose parent is pid (/proc/PID/stat,
// proc(5): the fourth field), zombies left out.
func childrenOf(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var kids []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold spaces.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 2 && f[0] != "Z" && f[1] == strconv.Itoa(pid) {
			kids = append(kids, n)
		}
	}
	return kids
}

// outcome counts a window of responses by what the client saw.
type outcome struct {
	ok, uncompressed, broken, transport, status int
	failures                                    []string
}

func (o *outcome) total() int { return o.ok + o.uncompressed + o.broken + o.transport + o.status }

// fetch makes one request with Accept-Encoding: gzip and checks the
// body: gzip that inflates to the page is ok; anything else is counted.
func (s *nginxSite) fetch(c *http.Client, name string, o *outcome, mu *sync.Mutex) {
	rec := func(kind *int, why string) {
		mu.Lock()
		defer mu.Unlock()
		*kind++
		if why != "" && len(o.failures) < 20 {
			o.failures = append(o.failures, name+": "+why)
		}
	}
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/%s", s.port, name), nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := c.Do(req)
	if err != nil {
		rec(&o.transport, err.Error())
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		rec(&o.status, resp.Status)
		return
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		rec(&o.broken, fmt.Sprintf("body: %v after %d bytes", err, len(raw)))
		return
	}
	if resp.Header.Get("Content-Encoding") != "gzip" {
		if bytes.Equal(raw, s.pages[name]) {
			rec(&o.uncompressed, "")
		} else {
			rec(&o.broken, fmt.Sprintf("identity body of %d bytes, want %d", len(raw), len(s.pages[name])))
		}
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	var body []byte
	if err == nil {
		body, err = io.ReadAll(zr)
	}
	if err != nil || !bytes.Equal(body, s.pages[name]) {
		rec(&o.broken, fmt.Sprintf("gunzip: %v, %d bytes of %d (%d on the wire)", err, len(body), len(s.pages[name]), len(raw)))
		return
	}
	rec(&o.ok, "")
}

// load runs 4 clients for at most d and at most max requests, a new
// connection each (so that every worker, old or new, gets some), over
// every page but the largest.
func (s *nginxSite) load(d time.Duration, max int) outcome {
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableCompression: true, DisableKeepAlives: true}}
	names := []string{"p0.html", "p1.html", "p2.html", "p3.html"}
	var o outcome
	var mu sync.Mutex
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func(k int) {
			defer GinkgoRecover()
			defer wg.Done()
			for i := k; i < max && time.Now().Before(deadline); i += 4 {
				s.fetch(c, names[i%len(names)], &o, &mu)
			}
		}(k)
	}
	wg.Wait()
	return o
}

// drainer is a connection that asked for the largest page and stopped
// reading: its worker cannot finish the response, so an old worker stays
// up after a reload, holding its instance, until the drainer reads.
type drainer struct {
	c    net.Conn
	done chan []byte
}

// hold opens n drainers. The client's receive buffer is small (socket(7):
// SO_RCVBUF set before connect also stops autotuning).
func (s *nginxSite) hold(n int) []*drainer {
	var ds []*drainer
	for i := 0; i < n; i++ {
		dl := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			if err != nil {
				return err
			}
			return serr
		}}
		c, err := dl.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = c.Close() }) // released ones are closed already
		_, err = fmt.Fprintf(c, "GET /p4.html HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")
		Expect(err).NotTo(HaveOccurred())
		// One byte read: the worker has started the response, so its
		// shim has sent the first request to the device.
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		b := make([]byte, 1)
		_, err = io.ReadFull(c, b)
		Expect(err).NotTo(HaveOccurred())
		ds = append(ds, &drainer{c: c, done: make(chan []byte, 1)})
		ds[len(ds)-1].done <- b
	}
	return ds
}

// release reads every drainer's response to the end and checks it.
func (s *nginxSite) release(ds []*drainer, o *outcome) {
	var mu sync.Mutex
	for _, d := range ds {
		first := <-d.done
		_ = d.c.SetDeadline(time.Now().Add(30 * time.Second))
		rest, err := io.ReadAll(d.c)
		d.c.Close()
		raw := append(first, rest...)
		hdr, body, found := bytes.Cut(raw, []byte("\r\n\r\n"))
		switch {
		case err != nil || !found:
			mu.Lock()
			o.broken++
			o.failures = append(o.failures, fmt.Sprintf("drainer: %v, %d bytes", err, len(raw)))
			mu.Unlock()
			continue
		case !bytes.Contains(hdr, []byte("Content-Encoding: gzip")):
			mu.Lock()
			o.uncompressed++
			mu.Unlock()
			continue
		}
		// Chunked: nginx's gzip filter does not know the length.
		plain, err := unchunk(body)
		var page []byte
		if err == nil {
			var zr *gzip.Reader
			if zr, err = gzip.NewReader(bytes.NewReader(plain)); err == nil {
				page, err = io.ReadAll(zr)
			}
		}
		mu.Lock()
		if err != nil || !bytes.Equal(page, s.pages["p4.html"]) {
			o.broken++
			o.failures = append(o.failures, fmt.Sprintf("drainer: %v, %d bytes of %d", err, len(page), len(s.pages["p4.html"])))
		} else {
			o.ok++
		}
		mu.Unlock()
	}
}

// unchunk decodes an HTTP/1.1 chunked body (RFC 9112 section 7.1).
func unchunk(b []byte) ([]byte, error) {
	var out []byte
	for {
		line, rest, ok := bytes.Cut(b, []byte("\r\n"))
		if !ok {
			return nil, fmt.Errorf("chunk size line missing after %d bytes", len(out))
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.SplitN(line, []byte(";"), 2)[0])), 16, 64)
		if err != nil || n < 0 || int64(len(rest)) < n+2 {
			return nil, fmt.Errorf("chunk size %q after %d bytes", line, len(out))
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, rest[:n]...)
		b = rest[n+2:]
	}
}

// shimLine is the part of a drop-in stats line these specs read.
type shimLine struct {
	PID         int    `json:"pid"`
	StreamsShim uint64 `json:"streams_shim"`
	Shim        *struct {
		Stats struct {
			HWRequests         uint64            `json:"hw_requests"`
			SWRequests         uint64            `json:"sw_requests"`
			StartFailures      uint64            `json:"start_failures"`
			HardwareOnlyErrors uint64            `json:"hardware_only_errors"`
			InstanceAttaches   uint64            `json:"instance_attaches"`
			Fallbacks          map[string]uint64 `json:"fallbacks"`
		} `json:"stats"`
	} `json:"shim"`
}

func readShimLines(path string) map[int]shimLine {
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	lines := map[int]shimLine{}
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s shimLine
		Expect(json.Unmarshal([]byte(l), &s)).To(Succeed(), "%s:%d", path, i+1)
		lines[s.PID] = s
	}
	return lines
}

// reloadRun is what one reload run measured.
type reloadRun struct {
	before, during, after  outcome
	drained                outcome
	oldWorkers, newWorkers []int
	// noInstance is the device's attach failures (every instance held)
	// when the old workers had exited, and at the end.
	noInstanceDuring, noInstanceEnd uint64
	// newHWDuring and newHWAfter are the device requests of the new
	// workers when the old ones had exited and at the end.
	newHWDuring, newHWAfter uint64
	newHeld                 int
	lines                   map[int]shimLine
	errorLog                string
}

// runReload is the seed's reload: a device of 6 instances, nginx with 4
// workers on it under policy, load, a reload while the old workers still
// hold their instances (each has a drainer), the drainers released, and
// a later window once the old workers have exited.
func runReload(policy string) reloadRun {
	dir := builtDropin()
	dev := startDevice(shortTempDir(), "--instances", "6")
	s := newNginxSite()
	s.start(dir, dev.socket, policy)
	var r reloadRun
	r.oldWorkers = childrenOf(s.mustMaster())

	r.before = s.load(3*time.Second, 400)
	// 24 drainers over 4 reuseport sockets: every worker gets one but
	// with odds of about 4*(3/4)^24, 0.4%; the spec checks it.
	ds := s.hold(24)
	Eventually(func() int {
		n := 0
		for _, p := range dev.stats().Processes {
			if p.Connected && p.Instances > 0 {
				n++
			}
		}
		return n
	}, 10*time.Second, 100*time.Millisecond).Should(Equal(4), "every old worker holds an instance")

	s.reload()
	Eventually(func() int { return len(childrenOf(s.mustMaster())) }, 10*time.Second, 50*time.Millisecond).Should(Equal(8),
		"4 new workers beside the 4 old ones, which drain")
	for _, p := range childrenOf(s.mustMaster()) {
		if !containsInt(r.oldWorkers, p) {
			r.newWorkers = append(r.newWorkers, p)
		}
	}
	Expect(r.newWorkers).To(HaveLen(4))
	r.during = s.load(3*time.Second, 400)
	s.release(ds, &r.drained)
	Eventually(func() int { return len(childrenOf(s.mustMaster())) }, 30*time.Second, 50*time.Millisecond).Should(Equal(4),
		"the old workers exit once their drainers are served")
	newHW := func(t qatdev.Telemetry) (n uint64, held int) {
		for _, p := range t.Processes {
			if containsInt(r.newWorkers, p.PID) {
				n += p.Requests
				held += p.Instances
			}
		}
		return n, held
	}
	t := dev.stats()
	r.noInstanceDuring = t.Model.AttachFailures.NoInstance
	r.newHWDuring, _ = newHW(t)
	r.after = s.load(3*time.Second, 400)
	t = dev.stats()
	r.noInstanceEnd = t.Model.AttachFailures.NoInstance
	r.newHWAfter, r.newHeld = newHW(t)
	s.stop()
	r.lines = readShimLines(s.stats)
	if b, err := os.ReadFile(filepath.Join(s.prefix, "logs", "error.log")); err == nil {
		r.errorLog = string(b)
	}
	dev.stop()
	return r
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (r reloadRun) report(policy string) string {
	fb, fbWorkers := r.newFallbacks("no_instance")
	var hwOnly uint64
	for _, p := range r.newWorkers {
		if l := r.lines[p]; l.Shim != nil {
			hwOnly += l.Shim.Stats.HardwareOnlyErrors
		}
	}
	logLine := ""
	for _, l := range strings.Split(r.errorLog, "\n") {
		if strings.Contains(l, "deflate() failed") {
			logLine = "; nginx error.log: " + l
			break
		}
	}
	return fmt.Sprintf("policy %s: no_instance fallbacks %d in %d new workers, hardware_only_errors %d%s; old workers %v, new %v; responses ok/uncompressed/broken/transport/status: before %d/%d/%d/%d/%d, during %d/%d/%d/%d/%d, after %d/%d/%d/%d/%d, drainers %d/%d/%d; device no_instance %d during, %d at end; new workers' device requests %d during, %d at end, holding %d instances",
		policy, fb, fbWorkers, hwOnly, logLine, r.oldWorkers, r.newWorkers,
		r.before.ok, r.before.uncompressed, r.before.broken, r.before.transport, r.before.status,
		r.during.ok, r.during.uncompressed, r.during.broken, r.during.transport, r.during.status,
		r.after.ok, r.after.uncompressed, r.after.broken, r.after.transport, r.after.status,
		r.drained.ok, r.drained.uncompressed, r.drained.broken,
		r.noInstanceDuring, r.noInstanceEnd, r.newHWDuring, r.newHWAfter, r.newHeld)
}

// newFallbacks sums a fallback reason over the new workers' stats lines.
func (r reloadRun) newFallbacks(reason string) (n uint64, workers int) {
	for _, p := range r.newWorkers {
		l, ok := r.lines[p]
		Expect(ok).To(BeTrue(), "new worker %d wrote its counters", p)
		if l.Shim != nil && l.Shim.Stats.Fallbacks[reason] > 0 {
			n += l.Shim.Stats.Fallbacks[reason]
			workers++
		}
	}
	return n, workers
}

var _ = Describe("the seed's reload, live: nginx -s reload on a device of 6 instances", Label("live"), func() {
	It("under failover: every response intact, the new workers without an instance fall back (no_instance), and get instances once the old ones exit", func() {
		r := runReload("failover")
		AddReportEntry("reload under failover", r.report("failover"))
		GinkgoWriter.Println(r.report("failover"))
		for _, o := range []outcome{r.before, r.during, r.after, r.drained} {
			Expect(o.failures).To(BeEmpty())
			Expect(o.ok).To(Equal(o.total()), "every response gzipped and intact")
			Expect(o.ok).To(BeNumerically(">", 0))
		}
		// 4 old workers hold 4 of 6: two new workers find none.
		Expect(r.noInstanceDuring).To(BeNumerically(">", 0), "the device counted attach failures")
		n, workers := r.newFallbacks("no_instance")
		Expect(n).To(BeNumerically(">", 0), "the new workers counted no_instance fallbacks")
		Expect(workers).To(BeNumerically("<=", 2), "only the workers beyond the 2 free instances")
		// Once the old workers are gone every attach succeeds, and the
		// new workers' streams run on the device again.
		Expect(r.noInstanceEnd).To(Equal(r.noInstanceDuring), "no attach failure after the old workers exited")
		Expect(r.newHWAfter).To(BeNumerically(">", r.newHWDuring), "the later window ran on the device")
		Expect(r.newHeld).To(BeNumerically(">=", 3), "the new workers hold instances")
	})

	It("under hardware-only: the new workers without an instance fail their gzip responses, as the seed saw", func() {
		r := runReload("hardware-only")
		AddReportEntry("reload under hardware-only", r.report("hardware-only"))
		GinkgoWriter.Println(r.report("hardware-only"))
		GinkgoWriter.Println(r.during.failures)
		Expect(r.before.ok).To(Equal(r.before.total()))
		Expect(r.noInstanceDuring).To(BeNumerically(">", 0))
		failed := r.during.broken + r.during.transport + r.during.status + r.during.uncompressed
		Expect(failed).To(BeNumerically(">", 0), "responses of the workers without an instance fail")
		var errs uint64
		for _, p := range r.newWorkers {
			if l := r.lines[p]; l.Shim != nil {
				errs += l.Shim.Stats.HardwareOnlyErrors
			}
		}
		Expect(errs).To(BeNumerically(">", 0), "hardware_only_errors counted")
		Expect(r.errorLog).To(ContainSubstring("deflate() failed"))
		// Once the old workers are gone, the new ones attach and serve.
		Expect(r.after.ok).To(Equal(r.after.total()), "%v", r.after.failures)
	})
})
