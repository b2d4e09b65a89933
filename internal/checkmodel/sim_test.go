package checkmodel_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/checkmodel"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/sim/cost"
)

var _ = Describe("the simulated twin", func() {
	It("is a valid scenario for both servers, and refuses an unknown one", func() {
		for _, sys := range []string{checkmodel.SystemRedis, checkmodel.SystemSavanna} {
			data, err := checkmodel.Scenario(checkmodel.SimConfig{System: sys, Command: "get", Clients: 1000, Requests: 100000, DataSize: 3})
			Expect(err).NotTo(HaveOccurred())
			s, err := scenario.Parse("twin.yaml", data)
			Expect(err).NotTo(HaveOccurred(), string(data))
			Expect(s.File.Hosts).To(HaveKey("server"))
		}
		_, err := checkmodel.Scenario(checkmodel.SimConfig{System: "memcached", Command: "GET", Clients: 1, Requests: 1, DataSize: 3})
		Expect(err).To(MatchError(ContainSubstring(`system "memcached"`)))
	})

	It("gives every figure positive and finite, the same on every run", func() {
		c := checkmodel.SimConfig{System: checkmodel.SystemRedis, Command: "SET", Clients: 10, Requests: 500, DataSize: 3}
		a, err := checkmodel.RunSim(c)
		Expect(err).NotTo(HaveOccurred())
		for _, v := range []float64{a.RPS, a.MeanMS, a.P99MS, a.ServerCPUus, a.ClientCPUus} {
			Expect(v > 0 && !math.IsInf(v, 0)).To(BeTrue(), "%+v", a)
		}
		Expect(a.Requests).To(Equal(500.0))
		Expect(a.Notes).To(BeEmpty())
		b, err := checkmodel.RunSim(c)
		Expect(err).NotTo(HaveOccurred())
		Expect(b).To(Equal(a))
	})

	It("names a cost file that does not load", func() {
		_, err := checkmodel.RunSim(checkmodel.SimConfig{System: checkmodel.SystemRedis, Command: "SET", Clients: 1, Requests: 10,
			DataSize: 3, CostFile: "testdata/redis-benchmark-6-set.csv"})
		Expect(err).To(MatchError(ContainSubstring("redis-benchmark-6-set.csv")))
	})
})

var _ = Describe("the simulated twin's model mechanisms", func() {
	It("carries the cost file's spread through to its tails", func() {
		dir := GinkgoT().TempDir()
		file := filepath.Join(dir, "spread.yaml")
		data := string(cost.DefaultBytes())
		old := "  kernel_tcp_rx:\n    {value: 1200, unit: ns, "
		Expect(data).To(ContainSubstring(old))
		data = strings.Replace(data, old, "  kernel_tcp_rx:\n    {value: 1200, unit: ns, spread: 1, spread_source: \"a spec's\", ", 1)
		Expect(os.WriteFile(file, []byte(data), 0o644)).To(Succeed())
		run := func(costFile string) checkmodel.Point {
			p, err := checkmodel.RunSim(checkmodel.SimConfig{System: checkmodel.SystemRedis, Command: "GET", Clients: 1,
				Requests: 2000, DataSize: 3, CostFile: costFile})
			Expect(err).NotTo(HaveOccurred())
			return p
		}
		flat, spread := run(""), run(file)
		Expect(flat.P99MS / flat.MeanMS).To(BeNumerically("<", 1.01))
		Expect(spread.P99MS / spread.MeanMS).To(BeNumerically(">", 1.2))
	})
})
