package main

import (
	"bytes"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/calibrate"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/sim/cost"
)

// loadProbe always reports the same machine state.
type loadProbe calibrate.LoadSample

func (p loadProbe) Sample() (calibrate.LoadSample, error) { return calibrate.LoadSample(p), nil }

// calibrateCmd runs simrun calibrate with args and fake benchmarks on a
// machine in state load, returning the exit code and output.
func calibrateCmd(load calibrate.LoadSample, args ...string) (int, string, string) {
	return calibrateCmdAt(load, 90, args...)
}

// calibrateCmdAt is calibrateCmd with the fake null system call at ns.
func calibrateCmdAt(load calibrate.LoadSample, ns float64, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	b := calibrate.Bench{Name: "getppid", Unit: "ns/call", What: "a fake null system call",
		Run: func(float64) (calibrate.Sample, error) { return calibrate.Sample{Value: ns}, nil }}
	code := cmdCalibrateWith(args, &out, &errOut, calibrate.Options{Benches: []calibrate.Bench{b}, Probe: loadProbe(load)})
	return code, out.String(), errOut.String()
}

var _ = Describe("simrun calibrate", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })
	busy := calibrate.LoadSample{Load1: 4, CPUs: 2, Others: 0.95, WallPerCPU: 1.9}
	quiet := calibrate.LoadSample{Load1: 0.05, CPUs: 2, Others: 0.01, WallPerCPU: 1.0}

	It("refuses on a busy machine, naming why, and writes nothing", func() {
		out := filepath.Join(dir, "c.yaml")
		code, _, stderr := calibrateCmd(busy, "--out", out)
		Expect(code).To(Equal(1))
		Expect(stderr).To(ContainSubstring("simrun calibrate: refused: the machine is too busy for stable figures (before the benchmarks): load average 4.00"))
		Expect(stderr).To(ContainSubstring("give --force"))
		Expect(out).NotTo(BeAnExistingFile())
	})

	It("with --force writes a file marked noisy that sim/cost loads", func() {
		out := filepath.Join(dir, "c.yaml")
		code, stdout, stderr := calibrateCmd(busy, "--out", out, "--force", "--runs", "3")
		Expect(code).To(Equal(0), stderr)
		m, err := cost.For(costops.Table()).Load(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Name()).To(HaveSuffix("-noisy"))
		Expect(stdout).To(ContainSubstring("NOISY: busy machine, written with --force"))
		Expect(stdout).To(MatchRegexp(`syscall\s+90\s+ns\s+0\.0%\s+getppid  noisy`))
		Expect(stdout).To(ContainSubstring("Wrote " + out))
	})

	It("writes an unmarked file on a quiet machine, the benchmarks that did not run falling back to defaults", func() {
		out := filepath.Join(dir, "c.yaml")
		code, stdout, stderr := calibrateCmd(quiet, "--out", out, "--quiet")
		Expect(code).To(Equal(0), stderr)
		Expect(stderr).To(BeEmpty())
		data, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).NotTo(ContainSubstring("NOISY"))
		Expect(string(data)).To(ContainSubstring("benchmark futex_wake did not run"))
		Expect(stdout).To(ContainSubstring("Kept at the default price"))
	})

	It("compares two calibrations, failing on a price beyond 5% that neither marked noisy", func() {
		a, b, c := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.yaml")
		for f, ns := range map[string]float64{a: 90, b: 90, c: 100} {
			code, _, stderr := calibrateCmdAt(quiet, ns, "--out", f, "--quiet")
			Expect(code).To(Equal(0), stderr)
		}
		var out, errOut bytes.Buffer
		Expect(run([]string{"calibrate", "compare", a, b}, &out, &errOut)).To(Equal(0), errOut.String())
		Expect(out.String()).To(MatchRegexp(`\nsyscall\s+90\s+90\s+ns\s+\+0\.0%\s*\n`))
		Expect(out.String()).To(ContainSubstring("1 measured prices: 1 within 5%, 0 beyond it and marked noisy, 0 beyond it unmarked"))
		out.Reset()
		Expect(run([]string{"calibrate", "compare", a, c}, &out, &errOut)).To(Equal(1))
		Expect(out.String()).To(MatchRegexp(`\nsyscall\s+90\s+100\s+ns\s+\+11\.1%\s+BEYOND 5%\n`))
		// A looser limit passes it.
		out.Reset()
		Expect(run([]string{"calibrate", "compare", "--limit", "0.2", a, c}, &out, &errOut)).To(Equal(0))
		// Marked noisy (a busy machine, --force): beyond, but explained.
		n := filepath.Join(dir, "n.yaml")
		code, _, stderr := calibrateCmdAt(busy, 100, "--out", n, "--force", "--quiet")
		Expect(code).To(Equal(0), stderr)
		out.Reset()
		Expect(run([]string{"calibrate", "compare", a, n}, &out, &errOut)).To(Equal(0))
		Expect(out.String()).To(ContainSubstring("beyond 5%, marked noisy (B noisy"))
	})

	It("refuses a compare it cannot make", func() {
		var out, errOut bytes.Buffer
		Expect(run([]string{"calibrate", "compare", "only-one.yaml"}, &out, &errOut)).To(Equal(2))
		Expect(errOut.String()).To(ContainSubstring("usage: simrun calibrate compare"))
		errOut.Reset()
		Expect(run([]string{"calibrate", "compare", filepath.Join(dir, "none.yaml"), filepath.Join(dir, "none.yaml")}, &out, &errOut)).To(Equal(2))
		Expect(errOut.String()).To(ContainSubstring("none.yaml"))
		errOut.Reset()
		Expect(run([]string{"calibrate", "compare", "--limit", "0", "a", "b"}, &out, &errOut)).To(Equal(2))
		Expect(errOut.String()).To(ContainSubstring("--limit 0"))
	})

	It("refuses bad flags", func() {
		code, _, stderr := calibrateCmd(quiet, "--runs", "0")
		Expect(code).To(Equal(2))
		Expect(stderr).To(ContainSubstring("--runs 0"))
		code, _, _ = calibrateCmd(quiet, "extra")
		Expect(code).To(Equal(2))
	})

	It("measures this machine with --quick and writes a cost file a scenario can use", Label("slow"), func() {
		out := filepath.Join(dir, "machine.yaml")
		var stdout, stderr bytes.Buffer
		// --force: CI machines are shared; the figures are not asserted.
		code := run([]string{"calibrate", "--quick", "--runs", "2", "--force", "--quiet", "--out", out}, &stdout, &stderr)
		Expect(code).To(Equal(0), stderr.String())
		m, err := cost.For(costops.Table()).Load(out)
		Expect(err).NotTo(HaveOccurred())
		def, _, err := calibrate.DefaultModel()
		Expect(err).NotTo(HaveOccurred())
		data, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		for op := range def {
			Expect(string(data)).To(ContainSubstring("\n  "+op+": {"), op)
		}
		Expect(m.Name()).To(HavePrefix("calibrated-"))
		Expect(stdout.String()).To(MatchRegexp(`\nsyscall\s+\S+\s+ns`))
		Expect(stdout.String()).To(MatchRegexp(`\nstack_tcp_rx\s+\S+\s+ns`))

		// A scenario names the file under a host's cost.
		sc := filepath.Join(dir, "s.yaml")
		Expect(os.WriteFile(sc, []byte(calibratedScenario), 0o644)).To(Succeed())
		var rs, re bytes.Buffer
		Expect(run([]string{"run", sc, "--format", "json"}, &rs, &re)).To(Equal(0), re.String())
	})
})

// calibratedScenario is a small UDP reflection whose hosts are priced by
// the calibrated file.
const calibratedScenario = `version: 1
name: calibrated
seed: 1
duration: 2ms
warmup: 500us
hosts:
  server:
    machine: host
    cost: {file: machine.yaml}
    nics:
      - {name: eth0, model: hi1822-25g, numa_node: 0, ip: 10.0.0.1/24}
    apps:
      - {kind: testpmd, nic: eth0, core: 0, forward: macswap}
  client:
    machine: host
    cost: {file: machine.yaml}
    nics:
      - {name: eth0, model: hi1822-25g, numa_node: 0, ip: 10.0.0.2/24}
    apps:
      - {kind: pktgen, nic: eth0, core: 1, target: server.eth0, rate_pps: 100000, size: 60, flows: 4}
links:
  - ends: [server.eth0, client.eth0]
    latency: 10us
`
