//go:build !dpdk

// Like serve_test.go, whose live helpers it uses, this file is left out
// of -tags dpdk builds.

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/qatdev"
)

// freePort is a loopback TCP port free a moment ago.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// runLeak runs dropin's leak program through `simrun exec --qat` under
// policy and returns its output line and the device's telemetry after
// the process has gone.
func runLeak(dev *device, policy string, args ...string) (string, qatdev.Telemetry) {
	dir := builtDropin()
	before := dev.stats().Server.Disconnects
	cmd := exec.Command(liveSimrun(), append([]string{"exec", "--dropin", dir, "--qat", dev.socket, "--stats", "--",
		filepath.Join(dir, "leak")}, args...)...)
	cmd.Env = append(cmd.Environ(), "SAVANNA_ZLIB_POLICY="+policy)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	// The connection's close is seen by the server after the exit.
	var t qatdev.Telemetry
	Eventually(func() uint64 { t = dev.stats(); return t.Server.Disconnects }, 10*time.Second, 50*time.Millisecond).
		Should(BeNumerically(">", before))
	return string(out), t
}

// leakFigures are one leak run's: its own line and the device's
// counters for its process.
type leakFigures struct {
	opened, failed       int
	allocFailures        uint64
	leakedBytes, leakBuf uint64
	requests             uint64
}

var leakLine = regexp.MustCompile(`leak: (\d+) streams opened, (\d+) failed`)

func figures(out string, t qatdev.Telemetry) leakFigures {
	m := leakLine.FindStringSubmatch(out)
	Expect(m).NotTo(BeNil(), out)
	var f leakFigures
	f.opened, _ = strconv.Atoi(m[1])
	f.failed, _ = strconv.Atoi(m[2])
	// The last process to connect is the run's.
	Expect(t.Processes).NotTo(BeEmpty())
	p := t.Processes[0]
	for _, q := range t.Processes {
		if q.PID > p.PID {
			p = q
		}
	}
	Expect(p.Connected).To(BeFalse())
	f.allocFailures, f.leakedBytes, f.leakBuf, f.requests = p.AllocFailures, p.Leaked.Bytes, p.Leaked.Buffers, p.Requests
	return f
}

// scrape reads /metrics.
func scrape(addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(200))
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// sampleOf is the value of the series that starts with prefix (name
// and labels as the text format writes them).
func sampleOf(body, prefix string) float64 {
	for _, l := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			Expect(err).NotTo(HaveOccurred(), l)
			return v
		}
	}
	Fail(fmt.Sprintf("no series %s in /metrics", prefix))
	return 0
}

var _ = Describe("the seed's leak, live: streams never ended on a device with a small USDM limit", Label("live"), func() {
	It("runs the device out of pinned memory without deflateEnd and counts the leak at exit; with --end, none; /metrics says so", func() {
		for _, t := range []string{"gcc", "objdump"} {
			if _, err := exec.LookPath(t); err != nil {
				Skip(t + " not installed")
			}
		}
		maddr := fmt.Sprintf("127.0.0.1:%d", freePort())
		// One 2 MiB hugepage: about 15 streams' source and destination.
		dev := startDevice(shortTempDir(), "--instances", "6", "--usdm-limit", "2097152", "--metrics", maddr)

		out, t := runLeak(dev, "failover")
		leak := figures(out, t)
		AddReportEntry("leak, failover, no deflateEnd", fmt.Sprintf("%+v; device: %d leaked bytes in %d exits", leak, t.Model.Leaked.Bytes, t.Server.ExitsWithLeaks))
		Expect(leak.opened).To(Equal(40))
		Expect(leak.failed).To(BeZero(), "under failover the refused streams go to software")
		Expect(leak.allocFailures).To(BeNumerically(">", 0), "the device refused pinned memory")
		Expect(leak.leakedBytes).To(BeNumerically(">", 0), "counted as leaked at exit")
		Expect(t.Server.ExitsWithLeaks).To(BeEquivalentTo(1))
		Expect(out).To(MatchRegexp(`fallbacks \d+ \(no_pinned_memory \d+\)`))

		out, t = runLeak(dev, "failover", "--end")
		ended := figures(out, t)
		AddReportEntry("leak, failover, --end", fmt.Sprintf("%+v", ended))
		Expect(ended.opened).To(Equal(40))
		Expect(ended.failed).To(BeZero())
		Expect(ended.allocFailures).To(BeZero(), "each stream's memory is back before the next takes it")
		Expect(ended.leakedBytes).To(BeZero())
		Expect(ended.requests).To(BeEquivalentTo(40), "every stream on the device")
		Expect(t.Server.ExitsWithLeaks).To(BeEquivalentTo(1), "still only the first run's")

		out, t = runLeak(dev, "hardware-only")
		hwOnly := figures(out, t)
		AddReportEntry("leak, hardware-only, no deflateEnd", fmt.Sprintf("%+v", hwOnly))
		Expect(hwOnly.failed).To(BeEquivalentTo(hwOnly.allocFailures), "under hardware-only each refused stream's deflate fails")
		Expect(hwOnly.failed).To(BeNumerically(">", 0))
		Expect(hwOnly.leakedBytes).To(BeNumerically(">", 0))

		body := scrape(maddr)
		types := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) (\S+)$`).FindAllStringSubmatch(body, -1) {
			types[m[1]] = m[2]
		}
		for name, typ := range map[string]string{
			"savanna_qat_instances_in_use": "gauge", "savanna_qat_instances_free": "gauge",
			"savanna_qat_attach_failures_total": "counter", "savanna_qat_bad_requests_total": "counter",
			"savanna_qat_instance_requests_total": "counter", "savanna_qat_instance_input_bytes_total": "counter",
			"savanna_qat_process_requests_total": "counter", "savanna_qat_process_output_bytes_total": "counter",
			"savanna_usdm_process_pinned_bytes": "gauge", "savanna_usdm_process_alloc_failures_total": "counter",
			"savanna_usdm_leaked_bytes_total": "counter", "savanna_usdm_exits_with_leaks_total": "counter",
			"savanna_qat_faults_injected_total": "counter", "process_resident_memory_bytes": "gauge",
		} {
			Expect(types).To(HaveKeyWithValue(name, typ))
		}
		Expect(sampleOf(body, "savanna_usdm_leaked_bytes_total")).To(BeEquivalentTo(t.Model.Leaked.Bytes))
		Expect(sampleOf(body, "savanna_usdm_exits_with_leaks_total")).To(BeEquivalentTo(2))
		Expect(sampleOf(body, "savanna_qat_instances_free")).To(BeEquivalentTo(6))
		Expect(sampleOf(body, `savanna_qat_attach_failures_total{reason="no_instance"}`)).To(BeZero())
		Expect(sampleOf(body, `savanna_qat_process_requests_total{pid="`+strconv.Itoa(t.Processes[0].PID)+`"}`)).
			To(BeEquivalentTo(t.Processes[0].Requests))
		if _, err := exec.LookPath("promtool"); err == nil {
			check := exec.Command("promtool", "check", "metrics")
			check.Stdin = strings.NewReader(body)
			res, err := check.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "promtool check metrics: %s", res)
			Expect(strings.TrimSpace(string(res))).To(BeEmpty(), "promtool's lint problems")
		}
	})
})
