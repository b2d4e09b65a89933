package rig_test

import (
	"math"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/scenarios"
)

// fig reads one figure of a variant, 0 when it does not exist.
func fig(r *report.Report, variant, path string) float64 {
	v, ok := r.Figures[variant].Lookup(strings.Split(path, "."))
	if !ok {
		return 0
	}
	f, _ := v.(float64)
	return f
}

// ps turns a figure in nanoseconds with three decimals back into whole
// picoseconds, the unit the cores count in.
func ps(ns float64) int64 { return int64(math.Round(ns * 1000)) }

// sumLeaves adds the leaves named leaf under t, in picoseconds.
func sumLeaves(t report.Tree, leaf string) int64 {
	var total int64
	for k, v := range t {
		switch x := v.(type) {
		case report.Tree:
			total += sumLeaves(x, leaf)
		case float64:
			if k == leaf {
				total += ps(x)
			}
		}
	}
	return total
}

// coresOf returns the cpu.ID subtrees of a host's figures, "all" apart.
func coresOf(host report.Tree) map[string]report.Tree {
	out := map[string]report.Tree{}
	cpu, _ := host["cpu"].(report.Tree)
	for id, t := range cpu {
		if ct, ok := t.(report.Tree); ok && id != "all" {
			out[id] = ct
		}
	}
	return out
}

var _ = Describe("CPU attribution", func() {
	It("adds every core's operations and layers up to its busy time, exactly, in every bundled scenario", Label("slow"), func() {
		names := scenarios.Names()
		Expect(names).NotTo(BeEmpty())
		for _, name := range names {
			var edits []string
			if name == "million-connections" {
				// The same shape at 2,000 devices: the whole run is rig's
				// own slow spec (a minute of CPU).
				edits = []string{"devices: 1000000", "devices: 2000"}
			}
			r := runScenario(bundled(name, edits...))
			checked := 0
			for variant, t := range r.Figures {
				for hostName, h := range t {
					host, ok := h.(report.Tree)
					if !ok {
						continue
					}
					for id, ct := range coresOf(host) {
						where := name + " " + variant + " " + hostName + " cpu " + id
						busy := ps(ct["busy_ns"].(float64))
						ops, _ := ct["ops"].(report.Tree)
						layers, _ := ct["layers"].(report.Tree)
						Expect(sumLeaves(ops, "ns")).To(Equal(busy), where+": ops")
						Expect(sumLeaves(layers, "ns")).To(Equal(busy), where+": layers")
						checked++
					}
					cpu, _ := host["cpu"].(report.Tree)
					if all, ok := cpu["all"].(report.Tree); ok {
						allOps, _ := all["ops"].(report.Tree)
						Expect(sumLeaves(allOps, "ns")).To(Equal(ps(all["busy_ns"].(float64))), name+" "+variant+" "+hostName+": roll-up")
					}
				}
			}
			Expect(checked).To(BeNumerically(">", 0), name)
		}
	})

	It("charges a kernel-stack core softirq work for every packet it receives, and no DPDK driver price", func() {
		r := runScenario(bundled("gazelle-redis", "duration: 2500ms", "duration: 40ms"))
		var rx float64
		for i := range 1 { // the kernel variant's one queue, on CPU 0
			rx += fig(r, "kernel", "server.stack."+strconv.Itoa(i)+".instance.rx_packets")
		}
		Expect(rx).To(BeNumerically(">", 1000))
		Expect(fig(r, "kernel", "server.cpu.all.ops.softirq_packet.count")).To(Equal(rx))
		Expect(fig(r, "kernel", "server.cpu.all.ops.nic_rx_packet.count")).To(BeZero())
		Expect(fig(r, "kernel", "server.cpu.all.ops.nic_rx_burst.count")).To(BeZero())
		Expect(fig(r, "kernel", "server.cpu.all.ops.interrupt.count")).To(BeNumerically(">", 0))
		Expect(fig(r, "kernel", "server.cpu.all.layers.kernel.ns")).To(BeNumerically(">", 0))
		// The user-space stack pays the driver, and no softirq.
		Expect(fig(r, "lstack", "server.cpu.all.ops.softirq_packet.count")).To(BeZero())
		Expect(fig(r, "lstack", "server.cpu.all.ops.nic_rx_packet.count")).To(BeNumerically(">", 1000))
	})

	It("shows deflate in the software variant's profile and not in the QAT variant's (Tengine's flame graphs)", func() {
		r := runScenario(bundled("tengine-gzip-qat", "duration: 300ms", "duration: 40ms"))
		deflate := func(variant string) (share float64) {
			for _, p := range r.Profiles {
				if p.Variant != variant || p.Host != "web" {
					continue
				}
				var d float64
				for _, s := range p.Stacks {
					if strings.Contains(s.Frames, ";deflate_byte_l") {
						d += s.NS
					}
				}
				return d / p.TotalNS()
			}
			Fail("no profile of host web in variant " + variant)
			return 0
		}
		Expect(deflate("software")).To(BeNumerically(">", 0.1))
		Expect(deflate("qat")).To(BeZero())
		Expect(fig(r, "software", "web.cpu.all.layers.http.zlibshim.ns")).To(BeNumerically(">", 0))
	})
})

var _ = Describe("busy over a load generator's active phase", func() {
	It("shows a server saturated while the benchmark ran, where the window's average shows less", func() {
		// 40,000 requests take the kernel server ~330 ms of a 2.5 s run.
		r := runScenario(bundled("gazelle-redis", "requests: 100000", "requests: 20000"))
		window := fig(r, "kernel", "sim.seconds")
		active := fig(r, "kernel", "redis_benchmark.active.seconds")
		Expect(fig(r, "kernel", "redis_benchmark.finished")).To(Equal(1.0))
		Expect(active).To(BeNumerically(">", 0))
		Expect(active).To(BeNumerically("<", window/2))
		over := fig(r, "kernel", "server.cpu.all.busy_pct")
		during := fig(r, "kernel", "server.cpu.all.during.redis_benchmark.busy_pct")
		Expect(during).To(BeNumerically(">", 2*over))
		// A kernel core sleeps when it has nothing to do, so the work of
		// the window is that of the active phase, less the connections'
		// set-up before the first request and their close after the last.
		Expect(during * active).To(BeNumerically("<=", over*window))
		Expect(during * active).To(BeNumerically(">", over*window*0.95))
		// The kernel variant's one CPU: Redis's loop and the NIC's
		// interrupts.
		Expect(fig(r, "kernel", "server.cpu.0.during.redis_benchmark.busy_pct")).To(BeNumerically(">", fig(r, "kernel", "server.cpu.0.busy_pct")))
	})
})
