package checkmodel_test

import (
	"bytes"
	"context"
	"math"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/checkmodel"
)

// pt is a synthetic point.
func pt(clients int, rps, mean, p99, srv, cli float64) checkmodel.Point {
	return checkmodel.Point{System: checkmodel.SystemRedis, Command: "SET", Clients: clients, Requests: 1000,
		RPS: rps, MeanMS: mean, P99MS: p99, ServerCPUus: srv, ClientCPUus: cli}
}

// row returns the row of figure f.
func row(rows []checkmodel.Row, f checkmodel.Figure) checkmodel.Row {
	for _, r := range rows {
		if r.Figure == f {
			return r
		}
	}
	Fail("no row " + string(f))
	return checkmodel.Row{}
}

var _ = Describe("the comparison", func() {
	It("gives every figure a row, in order, with simulated/real - 1", func() {
		rows := checkmodel.Compare(pt(1, 100, 1, 2, 10, 10), pt(1, 400, 1.1, 2.2, 10, 5))
		var figs []checkmodel.Figure
		for _, r := range rows {
			figs = append(figs, r.Figure)
		}
		Expect(figs).To(Equal(checkmodel.Figures()))
		Expect(row(rows, checkmodel.FigRPS).Err).To(BeNumerically("~", 3, 1e-12))
		Expect(row(rows, checkmodel.FigTail).Real).To(Equal(2.0))
		Expect(row(rows, checkmodel.FigTail).Err).To(BeNumerically("~", 0, 1e-12))
	})

	It("marks issue 18's bands: latency at 1 client, throughput and CPU from 10, p99/mean everywhere", func() {
		one := checkmodel.Compare(pt(1, 100, 1, 2, 10, 10), pt(1, 400, 1.14, 3.5, 30, 5))
		Expect(row(one, checkmodel.FigMean).Mark).To(Equal(checkmodel.MarkWithin)) // +14% of ±15%
		Expect(row(one, checkmodel.FigRPS).Mark).To(Equal(checkmodel.MarkNoBand))  // +300%, no band at 1 client
		Expect(row(one, checkmodel.FigServerCPU).Mark).To(Equal(checkmodel.MarkNoBand))
		Expect(row(one, checkmodel.FigTail).Mark).To(Equal(checkmodel.MarkMiss)) // 3.5/1.14 against 2: +54%
		ten := checkmodel.Compare(pt(10, 1000, 1, 2, 10, 10), pt(10, 760, 5, 10, 8.1, 12.1))
		Expect(row(ten, checkmodel.FigRPS).Mark).To(Equal(checkmodel.MarkWithin))       // -24%
		Expect(row(ten, checkmodel.FigMean).Mark).To(Equal(checkmodel.MarkNoBand))      // +400%, no band at 10
		Expect(row(ten, checkmodel.FigServerCPU).Mark).To(Equal(checkmodel.MarkWithin)) // -19%
		Expect(row(ten, checkmodel.FigClientCPU).Mark).To(Equal(checkmodel.MarkMiss))   // +21%
		Expect(row(ten, checkmodel.FigTail).Mark).To(Equal(checkmodel.MarkWithin))      // 2 against 2
		Expect(checkmodel.Count(ten)).To(Equal(checkmodel.Tally{Within: 3, Miss: 1}))
	})

	It("keeps a point without data visible, marked, and counts it where a band applies", func() {
		rows := checkmodel.Compare(pt(10, 1000, 1, 2, math.NaN(), 10), pt(10, 0, 1, 2, 10, 10))
		Expect(rows).To(HaveLen(len(checkmodel.Figures())))
		Expect(row(rows, checkmodel.FigRPS).Mark).To(Equal(checkmodel.MarkNoData))
		Expect(row(rows, checkmodel.FigServerCPU).Mark).To(Equal(checkmodel.MarkNoData))
		Expect(math.IsNaN(row(rows, checkmodel.FigRPS).Err)).To(BeTrue())
		Expect(checkmodel.Count(rows).NoData).To(Equal(2))
	})

	It("writes every row, the tally, the busy machine and each miss's mechanism", func() {
		res := &checkmodel.Result{Config: checkmodel.Config{Clients: []int{1, 10}, Requests: 1000, DataSize: 3},
			Started: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Busy: []string{"before: load average 3.00 is above 0.50 per CPU on 2 CPUs"},
			Versions: []string{"Redis server v=7.0.15"}, Pinned: true, Skipped: []string{"simrun serve --app kv live: no TAP device"}}
		for _, n := range []int{1, 10} {
			for _, cmd := range []string{"SET", "GET"} {
				real, sim := pt(n, 1000, 1, 2, 10, 10), pt(n, 2000, 1.05, 1.1, 5, 5)
				real.Command, sim.Command = cmd, cmd
				res.Real, res.Sim = append(res.Real, real), append(res.Sim, sim)
				res.Rows = append(res.Rows, checkmodel.Compare(real, sim)...)
			}
		}
		var b bytes.Buffer
		Expect(checkmodel.WriteMarkdown(&b, res)).To(Succeed())
		md := b.String()
		var tableRows int
		for _, l := range strings.Split(md, "\n") {
			if strings.HasPrefix(l, "| redis |") {
				tableRows++
			}
		}
		Expect(tableRows).To(Equal(4 * len(checkmodel.Figures())))
		Expect(md).To(ContainSubstring("**These figures are from a busy machine**"))
		Expect(md).To(ContainSubstring("2026-12-01"))
		Expect(md).To(ContainSubstring("Not run: simrun serve --app kv live: no TAP device"))
		Expect(md).To(ContainSubstring("| redis | GET | 10 | throughput (req/s) | 1000 | 2000 | +100.0% | ±25% | MISS |"))
		Expect(md).To(ContainSubstring("| redis | SET | 1 | mean latency (ms) | 1 | 1.05 | +5.0% | ±15% | within |"))
		Expect(md).To(ContainSubstring("- **throughput (req/s)** (redis SET c=10 +100.0%, redis GET c=10 +100.0%): " + checkmodel.Mechanism(checkmodel.FigRPS)))
		t := checkmodel.Count(res.Rows)
		Expect(md).To(ContainSubstring("%d of %d banded figures within their band", t.Within, t.Within+t.Miss))
		var txt bytes.Buffer
		Expect(checkmodel.WriteText(&txt, res)).To(Succeed())
		Expect(txt.String()).To(ContainSubstring("busy machine: before: load average"))
		Expect(txt.String()).To(ContainSubstring("not run: simrun serve"))
	})
})

var _ = Describe("a run's configuration", func() {
	It("is refused, naming every bad flag, before anything is started", func() {
		_, err := checkmodel.Run(context.Background(), checkmodel.Config{Clients: []int{0}, Commands: []string{"DEL"},
			Workloads: []string{checkmodel.WorkloadSavanna, "memcached", checkmodel.WorkloadNginx}, Duration: 1500 * time.Millisecond})
		for _, want := range []string{"--clients: 0", "--requests: 0", "data size 0", "--timeout", `command "DEL"`, "--savanna",
			`--workloads: "memcached"`, "--duration: 1.5s"} {
			Expect(err).To(MatchError(ContainSubstring(want)))
		}
	})
})
