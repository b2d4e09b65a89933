package rig_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig"
)

var _ = Describe("million-connections", func() {
	It("cut to 2,000 devices, establishes every connection and answers every request", func() {
		r := runScenario(bundled("million-connections", "devices: 1000000", "devices: 2000"))
		again := runScenario(bundled("million-connections", "devices: 1000000", "devices: 2000"))
		Expect(again.Figures).To(Equal(r.Figures), "the same seed gives the same figures")
		t := r.Figures["default"]
		for path, want := range map[string]int{
			"fleet.established": 2000, "fleet.answered": 2000, "fleet.connect_failures": 0, "fleet.resets": 0,
			"echo_server.total.accepted": 2000, "echo_server.total.errors": 0,
		} {
			Expect(inputLeaf(t, strings.Split(path, ".")...)).To(BeEquivalentTo(want), path)
		}
		// Every request of the run's first interval was answered; at most
		// one round trip's worth of the second is in flight at its end.
		Expect(inputLeaf(t, "fleet", "requests")).To(BeNumerically(">=", 2000))
		Expect(inputLeaf(t, "fleet", "outstanding")).To(BeNumerically("<", 5))
	})

	It("establishes 1,000,000 connections, answers every request and refuses none", Label("slow"), func() {
		r := runScenario(bundled("million-connections"))
		Expect(r.Expectations).To(HaveLen(9))
		for _, e := range r.Expectations {
			Expect(e.Held).To(BeTrue(), "%s: %s", e.Expr, e.Detail)
		}
	})
})

// liveHeapAtEnd runs million-connections cut to devices connections and
// returns the heap in use (after a collection) at the run's last step,
// with every connection established and idle between its requests.
func liveHeapAtEnd(devices int) uint64 {
	s := bundled("million-connections",
		"devices: 1000000", fmt.Sprintf("devices: %d", devices))
	var heap uint64
	_, err := rig.Run(s, rig.Options{Progress: func(p rig.Progress) {
		// The last step (of 100) of the run, while the world is alive.
		if !p.Done && p.Sim*100 >= p.End*99 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = ms.HeapAlloc
		}
	}})
	if err != nil {
		panic(err)
	}
	return heap
}

// BenchmarkIdleConnMemory reports the heap a whole simulated host holds
// per idle connection (bytes/conn: the client's and the server's
// endpoint, lstack's and the interface's state and the apps', divided by
// two for one side): the heap at the end of million-connections cut to
// 200,000 devices less that at 1,000, over the 199,000 more, so that
// what does not grow with the connections (mbuf pools, the engine)
// cancels, while what does (the connection tables, the timer heaps)
// counts whole.
func BenchmarkIdleConnMemory(b *testing.B) {
	RegisterTestingT(b) // bundled asserts with Gomega
	const small, large = 1000, 200000
	var per float64
	for i := 0; i < b.N; i++ {
		lo, hi := liveHeapAtEnd(small), liveHeapAtEnd(large)
		per = float64(int64(hi)-int64(lo)) / float64(large-small) / 2
	}
	b.ReportMetric(per, "bytes/conn")
}
