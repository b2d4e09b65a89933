package calibrate_test

import (
	"bytes"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/calibrate"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/sim/cost"
)

// meas is a measurement with the given median and relative spread (the
// interquartile range over the median; the range is twice that).
func meas(name string, median, spread float64) *calibrate.Measurement {
	return &calibrate.Measurement{Bench: calibrate.Bench{Name: name, Unit: "ns/x", What: "fake " + name},
		Summary: calibrate.Summary{Runs: 9, Median: median, Min: median * (1 - spread), Max: median * (1 + spread),
			Q1: median * (1 - spread/2), Q3: median * (1 + spread/2)},
		Noisy: spread > 0.05}
}

// synthetic is a result as if every standard benchmark had run.
func synthetic() *calibrate.Result {
	ms := []*calibrate.Measurement{
		meas("getppid", 100, 0.01),
		meas("epoll_wait_0", 250, 0.01), meas("epoll_wait_1", 320, 0.01),
		meas("epoll_wait_16", 1370, 0.01), meas("epoll_wait_64", 4730, 0.01),
		meas("futex_wake", 180, 0.01), meas("sched_yield_same_cpu", 600, 0.01),
		meas("epoll_ctl_ae", 500, 0.01),
		meas("futex_pingpong_same_cpu", 1500, 0.02), meas("futex_pingpong_cross_cpu", 2300, 0.02),
		meas("memcpy_64", 0.2, 0.01), meas("memcpy_1500", 0.05, 0.01), meas("memcpy_65536", 0.04, 0.01),
		meas("checksum_1500", 0.07, 0.01),
		meas("tcp_rr_loopback", 12000, 0.02), meas("pipe_rr", 4000, 0.02),
		meas("deflate_l1", 10, 0.01), meas("deflate_l6", 20, 0.01), meas("deflate_l9", 80, 0.01),
		meas("inflate", 4, 0.01), meas("crc32", 0.03, 0.01),
		meas("stack_pingpong", 0, 0.01),
	}
	// The stack: one TCP input per packet and 100 bytes copied; the
	// driver's work from lstack's counters (one packet in and out).
	// At 2.6 GHz the driver's two per-packet prices (30 cycles each) are
	// 23.08 ns, the copies 5 ns; stack_tcp_rx's default, 250 cycles, is
	// 96.15 ns. A measured 28.08 + 2 × 96.15 ns gives the ratio 2.
	st := ms[len(ms)-1]
	st.Summary.Median = 2*30/2.6 + 100*0.05 + 2*250/2.6
	st.Summary.Min, st.Summary.Max = st.Summary.Median, st.Summary.Median
	st.Summary.Q1, st.Summary.Q3 = st.Summary.Median, st.Summary.Median
	st.Extra = map[string]float64{"stack_tcp_rx": 1, "copy_byte": 100}
	return &calibrate.Result{Runs: 9, Rule: calibrate.DefaultRule(), Measurements: ms,
		Machine: calibrate.Machine{CPU: "Test CPU 9000", MHz: 2600, CPUs: 2, Kernel: "6.1.0 x86_64", Go: "go1.26", Date: "2026-01-02"}}
}

func price(prices []calibrate.Price, op string) calibrate.Price {
	for _, p := range prices {
		if p.Op == op {
			return p
		}
	}
	Fail("no price for " + op)
	return calibrate.Price{}
}

func written(r *calibrate.Result) ([]calibrate.Price, []byte) {
	def, order, err := calibrate.DefaultModel()
	Expect(err).NotTo(HaveOccurred())
	prices := calibrate.Map(r, def, order)
	var buf bytes.Buffer
	Expect(calibrate.NewFile(r, prices).Write(&buf)).To(Succeed())
	return prices, buf.Bytes()
}

var _ = Describe("the cost file", func() {
	It("loads with sim/cost and prices every operation of the default model, in its order", func() {
		prices, data := written(synthetic())
		m, err := cost.For(costops.Table()).Parse("calibrated.yaml", data)
		Expect(err).NotTo(HaveOccurred(), string(data))
		Expect(m.Name()).To(Equal("calibrated-test-cpu-9000-2026-01-02"))
		def, order, err := calibrate.DefaultModel()
		Expect(err).NotTo(HaveOccurred())
		Expect(prices).To(HaveLen(len(def)))
		for i, p := range prices {
			Expect(p.Op).To(Equal(order[i]))
			Expect(p.Entry.Source).NotTo(BeEmpty())
		}
	})

	It("gives a measured price in ns with the benchmark, its median and spread and the machine in its source", func() {
		prices, _ := written(synthetic())
		p := price(prices, "syscall")
		Expect(p.Measured).To(BeTrue())
		Expect(p.Entry).To(HaveField("Value", 100.0))
		Expect(p.Entry.Unit).To(Equal("ns"))
		Expect(p.Entry.Source).To(ContainSubstring("getppid"))
		Expect(p.Entry.Source).To(ContainSubstring("median 100 over 9 runs, spread 1.0% (interquartile range 99.5 to 100.5 over the median)"))
		Expect(p.Entry.Source).To(ContainSubstring("spread 1.0%"))
		Expect(p.Entry.Source).To(ContainSubstring("Test CPU 9000 (2 CPUs at 2600 MHz), Linux 6.1.0 x86_64, go1.26, 2026-01-02"))
		Expect(p.Noisy).To(BeFalse())
	})

	It("copies what it cannot measure from the default, saying why", func() {
		def, _, _ := calibrate.DefaultModel()
		prices, _ := written(synthetic())
		for _, op := range []string{"interrupt", "qat_submit", "nic_rx_packet", "remote_numa_byte", "resp_command"} {
			p := price(prices, op)
			Expect(p.Measured).To(BeFalse(), op)
			Expect(p.Entry.Value).To(Equal(def[op].Value), op)
			Expect(p.Entry.Unit).To(Equal(def[op].Unit), op)
			Expect(p.Entry.Source).To(HavePrefix("not measured on this machine: default price kept ("), op)
			Expect(p.Entry.Source).To(HaveSuffix("default's source: "+def[op].Source), op)
		}
		Expect(price(prices, "interrupt").Entry.Source).To(ContainSubstring("need a real NIC"))
	})

	It("derives the system-call and scheduling prices by the differences docs/calibration.md gives", func() {
		prices, _ := written(synthetic())
		Expect(price(prices, "syscall_futex").Entry.Value).To(Equal(80.0)) // 180 - 100
		// epoll_ctl's kernel work is ae's cycle less the null system
		// call, which the model charges beside it.
		Expect(price(prices, "epoll_ctl_kernel").Entry.Value).To(Equal(400.0)) // 500 - 100
		Expect(price(prices, "epoll_ctl_kernel").Measured).To(BeTrue())
		Expect(price(prices, "epoll_ctl_kernel").Entry.Source).To(ContainSubstring("epoll_ctl_ae"))
		// The switch is a sched_yield less its system call; each wake-up
		// is its hand-off less the two futex calls and the switch.
		Expect(price(prices, "context_switch").Entry.Value).To(Equal(500.0))   // 600 - 100
		Expect(price(prices, "wakeup_same_core").Entry.Value).To(Equal(640.0)) // 1500 - 2 × 180 - 500
		Expect(price(prices, "wakeup").Entry.Value).To(Equal(1440.0))          // 2300 - 2 × 180 - 500
		Expect(price(prices, "wakeup_same_core").Measured).To(BeTrue())
		Expect(price(prices, "wakeup_same_core").Entry.Source).To(ContainSubstring("sched_yield_same_cpu"))
		// The epoll points lie on 250 + 70 × ready: per call the
		// intercept less the null system call, per ready event the slope,
		// each its own op.
		Expect(price(prices, "epoll_wait_kernel").Entry.Value).To(BeNumerically("~", 150, 1e-9))
		Expect(price(prices, "epoll_wait_kernel").Entry.Source).To(ContainSubstring("250 ns per call + 70 ns per ready event"))
		Expect(price(prices, "epoll_wait_event").Entry.Value).To(BeNumerically("~", 70, 1e-9))
		Expect(price(prices, "epoll_wait_event").Measured).To(BeTrue())
		Expect(price(prices, "epoll_wait_event").Entry.Source).To(ContainSubstring("per ready event"))
	})

	It("writes each measured price's uncertainty from the runs' spread, propagated through the differences", func() {
		r := synthetic()
		for _, m := range r.Measurements {
			if m.Bench.Name == "futex_wake" {
				m.Summary.Q1, m.Summary.Q3 = 171, 189 // spread 10%
			}
		}
		prices, text := written(r)
		// syscall is getppid alone: 1% spread, written at the 2% floor.
		Expect(price(prices, "syscall").Entry.Uncertainty).To(Equal(0.02))
		// syscall_futex = futex_wake - getppid = 80 ns: (18 + 1) / 80.
		Expect(price(prices, "syscall_futex").Entry.Uncertainty).To(BeNumerically("~", 0.24, 0.001))
		// The epoll slope's uncertainty is its end points' over the span:
		// (2.5 + 47.3) / 64 / 70 = 1.1%, at the floor.
		Expect(price(prices, "epoll_wait_event").Entry.Uncertainty).To(Equal(0.02))
		Expect(text).To(ContainSubstring("uncertainty: 0.24"))
		// A default price kept says nothing it does not know.
		Expect(price(prices, "interrupt").Entry.Uncertainty).To(BeZero())
	})

	It("splits loopback TCP's per-segment figure, less IP and softirq at their default prices, in two halves", func() {
		def, _, _ := calibrate.DefaultModel()
		prices, _ := written(synthetic())
		rest := def["kernel_ip_rx"].Value + def["kernel_ip_tx"].Value + def["softirq_packet"].Value // ns in the default
		half := ((12000.0-4000)/2 - rest) / 2
		Expect(price(prices, "kernel_tcp_rx").Entry.Value).To(BeNumerically("~", half, 0.5))
		Expect(price(prices, "kernel_tcp_tx").Entry.Value).To(Equal(price(prices, "kernel_tcp_rx").Entry.Value))
		Expect(price(prices, "kernel_tcp_rx").Entry.Source).To(ContainSubstring("two equal halves"))
	})

	It("measures deflate at levels 1, 6 and 9 and interpolates the others, saying so", func() {
		prices, _ := written(synthetic())
		for l, want := range map[int]float64{1: 10, 2: 12, 3: 14, 4: 16, 5: 18, 6: 20, 7: 40, 8: 60, 9: 80} {
			p := price(prices, fmt.Sprintf("deflate_byte_l%d", l))
			Expect(p.Entry.Value).To(BeNumerically("~", want, 1e-9), "level %d", l)
			if l != 1 && l != 6 && l != 9 {
				Expect(p.Entry.Source).To(ContainSubstring("interpolated linearly"))
			}
		}
		Expect(price(prices, "inflate_byte").Entry.Value).To(Equal(4.0))
		Expect(price(prices, "crc32_byte").Entry.Value).To(Equal(0.03))
		Expect(price(prices, "copy_byte").Entry.Value).To(Equal(0.05))
	})

	It("prices the stack's own operations by the ratio of its measured CPU per packet to the model's account", func() {
		prices, _ := written(synthetic())
		p := price(prices, "stack_tcp_rx")
		Expect(p.Measured).To(BeTrue())
		Expect(p.Entry.Unit).To(Equal("ns"))
		Expect(p.Entry.Value).To(BeNumerically("~", 2*250/2.6, 0.05))
		Expect(p.Entry.Source).To(ContainSubstring("ratio 2"))
		// Not charged by the benchmark: the default stays.
		Expect(price(prices, "stack_udp_rx").Measured).To(BeFalse())
		Expect(price(prices, "nic_rx_packet").Measured).To(BeFalse())
	})

	It("without the sched_yield figure keeps the same-core wake-up inside context_switch, so that both hand-offs cost what they measured", func() {
		r := synthetic()
		r.Get("sched_yield_same_cpu").Skipped = "sched_yield switched on 10% of calls"
		def, _, _ := calibrate.DefaultModel()
		prices, _ := written(r)
		Expect(price(prices, "context_switch").Entry.Value).To(Equal(1140.0)) // 1500 - 2 × 180
		Expect(price(prices, "wakeup").Entry.Value).To(Equal(800.0))          // 2300 - 1500
		p := price(prices, "wakeup_same_core")
		Expect(p.Measured).To(BeFalse())
		Expect(p.Entry.Value).To(Equal(def["wakeup_same_core"].Value))
		Expect(p.Entry.Source).To(ContainSubstring("benchmark sched_yield_same_cpu skipped: sched_yield switched on 10% of calls"))
	})

	It("keeps the default where a difference is not positive, and where a benchmark was skipped", func() {
		r := synthetic()
		r.Get("futex_pingpong_cross_cpu").Summary.Median = 800 // less than its futex calls and a switch
		r.Get("tcp_rr_loopback").Skipped = "socket: permission denied"
		prices, data := written(r)
		_, err := cost.For(costops.Table()).Parse("calibrated.yaml", data)
		Expect(err).NotTo(HaveOccurred())
		Expect(price(prices, "wakeup").Measured).To(BeFalse())
		Expect(price(prices, "wakeup").Entry.Source).To(ContainSubstring("is not positive"))
		Expect(price(prices, "kernel_tcp_rx").Measured).To(BeFalse())
		Expect(price(prices, "kernel_tcp_rx").Entry.Source).To(ContainSubstring("benchmark tcp_rr_loopback skipped: socket: permission denied"))
	})

	It("marks a price from a noisy benchmark in its source and with a comment", func() {
		r := synthetic()
		*r.Get("getppid") = *meas("getppid", 100, 0.2)
		prices, data := written(r)
		p := price(prices, "syscall")
		Expect(p.Noisy).To(BeTrue())
		Expect(p.Entry.Source).To(HavePrefix("NOISY (largest spread 20.0%, limit 5%): "))
		Expect(string(data)).To(ContainSubstring("# noisy: spread 20.0%\n  syscall:"))
		// What is derived from it is noisy too.
		Expect(price(prices, "syscall_futex").Noisy).To(BeTrue())
		Expect(price(prices, "crc32_byte").Noisy).To(BeFalse())
	})

	It("marks the whole file noisy when --force wrote it on a busy machine", func() {
		r := synthetic()
		r.Busy = []string{"before: other processes used 90% of the CPU time (limit 25%)"}
		for _, m := range r.Measurements {
			m.Noisy = true
		}
		prices, data := written(r)
		m, err := cost.For(costops.Table()).Parse("calibrated.yaml", data)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Name()).To(HaveSuffix("-noisy"))
		Expect(string(data)).To(ContainSubstring(`description: "NOISY: measured on a busy machine and written with --force (before: other processes used 90%`))
		for _, p := range prices {
			if p.Measured {
				Expect(p.Entry.Source).To(ContainSubstring("machine busy, written with --force"), p.Op)
			}
		}
		Expect(strings.Count(string(data), "# noisy: spread")).To(Equal(countMeasured(prices)))
	})
})

func countMeasured(prices []calibrate.Price) int {
	n := 0
	for _, p := range prices {
		if p.Measured {
			n++
		}
	}
	return n
}
