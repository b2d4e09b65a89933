//go:build !dpdk

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/control"
	"github.com/savanna-sim/savanna/internal/livetest"
)

var _ = Describe("simrun serve --backend", func() {
	serveArgs := func(extra ...string) []string {
		return append([]string{"serve", "--ip", "10.78.0.2/24", "--app", "kv", "--port", "6379"}, extra...)
	}

	It("answers --backend dpdk in a build without the tag with the error naming the tag", func() {
		code, _, errOut := simrun(serveArgs("--backend", "dpdk", "--eal", "--no-huge -m 256 --no-pci --no-shconf -l 0-1 --vdev=net_tap0,iface=svd0")...)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("savanna was built without -tags dpdk; rebuild with go build -tags dpdk (needs libdpdk-dev)"))
	})

	DescribeTable("refuses what it cannot run, naming the flag",
		func(want string, extra ...string) {
			code, _, errOut := simrun(serveArgs(extra...)...)
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring(want))
		},
		Entry("dpdk without EAL arguments", "--eal is required with --backend dpdk", "--backend", "dpdk"),
		Entry("tap without an interface", "--tap is required with --backend tap"),
		Entry("the simulation, which is not live", "--backend sim: serve runs in real time", "--backend", "sim"),
		Entry("an unknown backend", `--backend "fpga": want tap or dpdk`, "--backend", "fpga"),
		Entry("a negative park", "--max-park -1s: must not be negative", "--tap", "x", "--max-park", "-1s"),
		Entry("an unknown log level", `--log-level: "loud": want debug, info, warn or error`, "--tap", "x", "--log-level", "loud"),
		Entry("a metrics address without a port", `--metrics "localhost": want HOST:PORT such as 127.0.0.1:9464`, "--tap", "x", "--metrics", "localhost"),
	)
})

// liveServe starts simrun serve --app kv on a TAP in a namespace of its
// own, as hw/tap's live specs do, with the extra flags, and gives the
// kernel side 10.77.0.1; it skips unless root with ip netns, /dev/net/tun
// and the programs named in need.
func liveServe(extra []string, need ...string) *livetest.Serve {
	if os.Geteuid() != 0 {
		Skip("live specs need root (network namespaces, TAP)")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		Skip("live specs need /dev/net/tun")
	}
	for _, p := range append([]string{"ip"}, need...) {
		if _, err := exec.LookPath(p); err != nil {
			Skip(fmt.Sprintf("live spec needs %s (.ci/run installs it)", p))
		}
	}
	liveOnce.Do(func() { liveBin, _, liveErr = livetest.BuildSimrun("SAVANNA_SIMRUN") })
	Expect(liveErr).NotTo(HaveOccurred())
	liveSeq++
	s := livetest.StartServeInNamespace(fmt.Sprintf("svw-%d-%d", os.Getpid(), liveSeq), liveBin, 20*time.Second,
		append([]string{"--tap", "sv0", "--ip", "10.77.0.2/24", "--app", "kv", "--port", "6379"}, extra...)...)
	out, err := s.Exec(10*time.Second, "ip", "addr", "add", "10.77.0.1/24", "dev", "sv0")
	Expect(err).NotTo(HaveOccurred(), out)
	return s
}

var (
	liveOnce sync.Once
	liveBin  string
	liveErr  error
	liveSeq  int
)

// shortTempDir is a temporary folder with a path short enough for a Unix
// socket.
func shortTempDir() string {
	d, err := os.MkdirTemp("", "svw")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, d)
	return d
}

var _ = Describe("watching simrun serve live", Label("live", "slow"), func() {
	It("is scraped by a real Prometheus during redis-benchmark: the commands counter rises, and promtool accepts /metrics", func() {
		s := liveServe([]string{"--metrics", "127.0.0.1:9464", "--ctl", "none"}, "redis-benchmark", "prometheus", "promtool")
		dir := shortTempDir()
		prom, err := livetest.StartPrometheus(s.NS, dir, "127.0.0.1:9090", "127.0.0.1:9464", 3*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_ = prom.Stop()
			GinkgoWriter.Printf("prometheus output:\n%s", prom.Output())
		})
		const q = "savanna_kv_commands_total"
		query := func() float64 {
			v, ok, err := prom.Query(q)
			Expect(err).NotTo(HaveOccurred())
			if !ok {
				return -1
			}
			return v
		}

		bench, err := livetest.StartInNetns(s.NS, 2*time.Minute, "redis-benchmark", "-h", "10.77.0.2", "-p", "6379",
			"-t", "set,get", "-n", "20000", "-c", "10", "-q")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(bench.Stop)
		var first float64
		Eventually(func() float64 { first = query(); return first }).WithTimeout(60*time.Second).WithPolling(250*time.Millisecond).
			Should(BeNumerically(">", 0), "Prometheus scraped a command count")
		Expect(bench.Wait()).To(Succeed(), bench.Output())
		// A second bounded run, so that the counter has more to count
		// however far the first had got when Prometheus first saw it.
		out, err := s.Exec(2*time.Minute, "redis-benchmark", "-h", "10.77.0.2", "-p", "6379", "-t", "ping", "-n", "2000", "-c", "2", "-q")
		Expect(err).NotTo(HaveOccurred(), out)
		var second float64
		Eventually(func() float64 { second = query(); return second }).WithTimeout(60*time.Second).WithPolling(250*time.Millisecond).
			Should(BeNumerically(">=", 2*20000+2*2000), "both runs scraped")
		Expect(second).To(BeNumerically(">", first))
		AddReportEntry("savanna_kv_commands_total through Prometheus' query API", fmt.Sprintf("%v, then %v", first, second))

		up, ok, err := prom.Query(`up{job="savanna"}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(up).To(BeEquivalentTo(1), "the target is up")

		body, err := livetest.HTTPGetInNetns(s.NS, "http://127.0.0.1:9464/metrics", 10*time.Second)
		Expect(err).NotTo(HaveOccurred())
		Expect(body).To(MatchRegexp(`(?m)^process_resident_memory_bytes \S+$`))
		check := exec.Command("promtool", "check", "metrics")
		check.Stdin = strings.NewReader(body)
		res, err := check.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "promtool check metrics: %s", res)
		Expect(strings.TrimSpace(string(res))).To(BeEmpty(), "promtool's lint problems")
	})

	It("lists ten kernel connections held open with simrun ctl show --conn --json", func() {
		sock := filepath.Join(shortTempDir(), "serve.sock")
		s := liveServe([]string{"--ctl", sock})
		var locals []string
		for i := 0; i < 10; i++ {
			c, err := livetest.DialInNetns(s.NS, "10.77.0.2:6379", 20*time.Second)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(c.Close)
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			_, err = c.Write([]byte("PING\r\n"))
			Expect(err).NotTo(HaveOccurred())
			buf := make([]byte, 7)
			_, err = io.ReadFull(c, buf)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(buf)).To(Equal("+PONG\r\n"))
			locals = append(locals, c.LocalAddr().String())
		}
		out, err := livetest.Run(20*time.Second, liveBin, "ctl", "--socket", sock, "show", "--conn", "--json")
		Expect(err).NotTo(HaveOccurred(), out)
		var got control.Sockets
		Expect(json.Unmarshal([]byte(out), &got)).To(Succeed(), out)
		var remotes []string
		for _, x := range got.Sockets {
			if x.State == "ESTABLISHED" {
				Expect(x.Local).To(Equal("10.77.0.2:6379"))
				Expect(x.SRTTNanos).To(BeNumerically(">", 0), "the PONG was acknowledged")
				Expect(x.Cwnd).To(BeNumerically(">", 0))
				remotes = append(remotes, x.Remote)
			}
		}
		Expect(remotes).To(ConsistOf(locals))
		Expect(got.Sockets).To(ContainElement(HaveField("State", "LISTEN")))

		out, err = livetest.Run(20*time.Second, liveBin, "ctl", "--socket", sock, "show", "--conn")
		Expect(err).NotTo(HaveOccurred(), out)
		GinkgoWriter.Printf("simrun ctl show --conn:\n%s", out)
		Expect(out).To(ContainSubstring("11 sockets"))
	})
})
