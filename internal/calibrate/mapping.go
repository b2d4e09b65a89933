package calibrate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/savanna-sim/savanna/sim/cost"
)

// Price is one operation's entry in the written file.
type Price struct {
	Op    string
	Entry cost.Entry
	// Measured: the value comes from this machine; otherwise it is the
	// default's, copied.
	Measured bool
	// Noisy: a benchmark it comes from spread more than the rule allows,
	// or the machine was busy (--force).
	Noisy bool
	// Spread is the largest relative spread of those benchmarks.
	Spread float64
	// Benches are the benchmarks the value comes from.
	Benches []string
}

// pricer maps measurements onto cost operations.
type pricer struct {
	r    *Result
	def  map[string]cost.Entry
	out  map[string]*Price
	why  map[string]string
	rule Rule
}

// Map prices every operation of the default model def: those this
// machine's measurements price, with the measured value (in ns) and a
// source naming the benchmarks, their medians and spreads, the way the
// figure was derived and the machine; every other one with the default's
// entry and a source saying why it was not measured. order is the
// operations' order in the written file.
func Map(r *Result, def map[string]cost.Entry, order []string) []Price {
	p := &pricer{r: r, def: def, out: map[string]*Price{}, why: map[string]string{}, rule: r.Rule}
	p.syscalls()
	p.scheduling()
	p.memory()
	p.kernelTCP()
	p.compression()
	p.stack()
	p.connScale() // KM: connscale_map.go
	p.tails()     // KM: tails_map.go, after the prices it divides by
	prices := make([]Price, 0, len(order))
	for _, op := range order {
		if m := p.out[op]; m != nil {
			prices = append(prices, *m)
			continue
		}
		d := def[op]
		reason := p.why[op]
		if reason == "" {
			reason = unmeasuredReason(op)
		}
		prices = append(prices, Price{Op: op, Entry: cost.Entry{Value: d.Value, Unit: d.Unit, Uncertainty: d.Uncertainty,
			Spread: d.Spread, SpreadSource: d.SpreadSource,
			Source: "not measured on this machine: default price kept (" + reason + "); default's source: " + d.Source}})
	}
	return prices
}

// defaultNS is the default's price of op in ns, cycles at ghz.
func (p *pricer) defaultNS(op string, ghz float64) float64 { return entryNS(p.def[op], ghz) }

// ns is op's price in the file being written: measured, or the
// default's at this machine's clock.
func (p *pricer) ns(op string) float64 {
	if m := p.out[op]; m != nil {
		return m.Entry.Value
	}
	return p.defaultNS(op, p.r.Machine.GHz())
}

// entryNS converts an entry to ns, cycles at ghz.
func entryNS(e cost.Entry, ghz float64) float64 {
	switch e.Unit {
	case "ps":
		return e.Value / 1e3
	case "us":
		return e.Value * 1e3
	case "cycles":
		return e.Value / ghz
	}
	return e.Value
}

// get returns the named measurements, or nil and records why an op
// that needs them is not measured.
func (p *pricer) get(ops []string, names ...string) []*Measurement {
	ms := make([]*Measurement, len(names))
	for i, n := range names {
		if ms[i] = p.r.Get(n); ms[i] == nil {
			why := "benchmark " + n + " did not run"
			for _, m := range p.r.Measurements {
				if m.Bench.Name == n {
					why = "benchmark " + n + " skipped: " + m.Skipped
				}
			}
			for _, op := range ops {
				p.why[op] = why
			}
			return nil
		}
	}
	return ms
}

// minUncertainty is the least uncertainty a measured price is written
// with: runs that agree to the nanosecond still measure a benchmark,
// not the simulated path.
const minUncertainty = 0.02

// propagated is the relative uncertainty of a figure derived from the
// measurements by sums and differences: each measurement's spread
// (interquartile range over median) times its median is its absolute
// uncertainty, and those add
// (worst case, so a difference of two close figures is as uncertain as
// it really is), over the figure.
func propagated(ns float64, from ...*Measurement) float64 {
	var abs float64
	for _, m := range from {
		abs += m.Summary.Spread() * math.Abs(m.Summary.Median)
	}
	return abs / math.Abs(ns)
}

// set prices op at ns from the measurements, unless op is not in the
// model or ns is not positive (then the default stays, saying why). Its
// uncertainty is propagated from the measurements' spreads.
func (p *pricer) set(op string, ns float64, method string, from ...*Measurement) {
	p.setU(op, ns, propagated(ns, from...), method, from...)
}

// setU is set with the uncertainty u worked out by the caller (a fit's
// slope is not a sum of its points).
func (p *pricer) setU(op string, ns, u float64, method string, from ...*Measurement) {
	if _, ok := p.def[op]; !ok {
		return
	}
	if !(ns > 0) || math.IsInf(ns, 0) {
		p.why[op] = fmt.Sprintf("the measured figure %s ns (%s) is not positive: the difference is below this machine's noise", num(ns), method)
		return
	}
	pr := &Price{Op: op, Measured: true}
	var parts []string
	for _, m := range from {
		pr.Noisy = pr.Noisy || m.Noisy
		pr.Spread = max(pr.Spread, m.Summary.Spread())
		pr.Benches = append(pr.Benches, m.Bench.Name)
		parts = append(parts, fmt.Sprintf("%s [%s]: %s %s", m.Bench.Name, m.Bench.What, m.Summary, m.Bench.Unit))
	}
	src := fmt.Sprintf("simrun calibrate: %s ns; %s; from %s; machine: %s", num(ns), method, strings.Join(parts, "; "), p.r.Machine)
	if pr.Noisy {
		src = fmt.Sprintf("NOISY (largest spread %.1f%%, limit %.0f%%%s): %s", 100*pr.Spread, 100*p.rule.MaxSpread, map[bool]string{true: "; machine busy, written with --force", false: ""}[p.r.Forced()], src)
	}
	if math.IsNaN(u) || math.IsInf(u, 0) {
		u = 1
	}
	pr.Entry = cost.Entry{Value: roundSig(ns, 4), Unit: "ns", Source: src,
		Uncertainty: roundSig(min(1, max(minUncertainty, u)), 2)}
	p.out[op] = pr
}

func (p *pricer) syscalls() {
	if ms := p.get([]string{"syscall"}, "getppid"); ms != nil {
		p.set("syscall", ms[0].Summary.Median, "a null system call's entry and exit", ms...)
	}
	if ms := p.get([]string{"syscall_futex"}, "futex_wake", "getppid"); ms != nil {
		p.set("syscall_futex", ms[0].Summary.Median-ms[1].Summary.Median,
			"FUTEX_WAKE with no waiter minus the null system call (the model charges syscall beside syscall_futex)", ms...)
	}
	if ms := p.get([]string{"epoll_ctl_kernel"}, "epoll_ctl_ae", "getppid"); ms != nil {
		p.set("epoll_ctl_kernel", ms[0].Summary.Median-ms[1].Summary.Median,
			"epoll_ctl in ae.c's per-request cycle (2 ADD, 2 DEL, 1 MOD) minus the null system call (the model charges syscall beside epoll_ctl_kernel)", ms...)
	}
	names := make([]string, 0, 4)
	for _, k := range EpollPoints() {
		names = append(names, fmt.Sprintf("epoll_wait_%d", k))
	}
	event := firstIn(p.def, "epoll_wait_event", "epoll_event", "epoll_ready_event")
	ms := p.get([]string{"epoll_wait_kernel", event}, append(names, "getppid")...)
	if ms == nil {
		return
	}
	xs, ys := make([]float64, 0, 4), make([]float64, 0, 4)
	for i, k := range EpollPoints() {
		xs, ys = append(xs, float64(k)), append(ys, ms[i].Summary.Median)
	}
	line, err := FitLine(xs, ys)
	if err != nil {
		p.why["epoll_wait_kernel"] = err.Error()
		return
	}
	sys := ms[len(ms)-1].Summary.Median
	fit := fmt.Sprintf("least-squares fit of the medians at 0, 1, 16 and 64 ready fds: %s ns per call + %s ns per ready event (R² %.3f)",
		num(line.Intercept), num(line.Slope), line.R2)
	if event != "" {
		// The intercept is pinned by the 0- and 1-ready points, the slope
		// by the 64-ready point against the 0-ready one: their spreads
		// bound each.
		n := len(EpollPoints())
		lo, hi := ms[0], ms[n-1]
		abs := func(m *Measurement) float64 { return m.Summary.Spread() * math.Abs(m.Summary.Median) }
		call := line.Intercept - sys
		p.setU("epoll_wait_kernel", call, (abs(lo)+abs(ms[len(ms)-1]))/math.Abs(call),
			fit+"; per call, minus the null system call (charged as syscall)", ms...)
		span := float64(EpollPoints()[n-1] - EpollPoints()[0])
		p.setU(event, line.Slope, (abs(lo)+abs(hi))/span/math.Abs(line.Slope), fit+"; per ready event", ms...)
		return
	}
	p.set("epoll_wait_kernel", line.Intercept+line.Slope-sys,
		fit+"; the model prices one epoll_wait_kernel per wait that returns events, with no per-event op, so the price is the fit at one ready event, minus the null system call (charged as syscall)", ms...)
}

func firstIn(m map[string]cost.Entry, names ...string) string {
	for _, n := range names {
		if _, ok := m[n]; ok {
			return n
		}
	}
	return ""
}

// scheduling prices the context switch and the two wake-ups. A futex
// hand-off between two threads (half a ping-pong round trip) is a
// FUTEX_WAKE that finds the waiter, the waiter's FUTEX_WAIT, the
// wake-up and a switch; sched_yield between two threads on one CPU is a
// system call and a switch with no wake-up. So, with F the futex call
// (futex_wake) and G the null system call (getppid):
//
//	context_switch   = sched_yield_same_cpu - G
//	wakeup_same_core = futex_pingpong_same_cpu - 2F - context_switch
//	wakeup           = futex_pingpong_cross_cpu - 2F - context_switch
//
// and the model, which charges context_switch beside one of the two
// wake-ups, prices a same-core hand-off at the same-CPU ping-pong's
// figure and a cross-core one at the cross-CPU ping-pong's. Without the
// sched_yield figure the switch and the same-core wake-up cannot be
// told apart: context_switch then holds both (the same-CPU hand-off less
// its two futex calls, as lmbench's lat_ctx and Tsuna's timectxsw
// measure a switch), wakeup_same_core keeps its default, and wakeup is
// what the cross-CPU hand-off adds, so that the sums stay the same.
func (p *pricer) scheduling() {
	ms := p.get([]string{"context_switch", "wakeup", "wakeup_same_core"}, "futex_pingpong_same_cpu", "futex_wake")
	if ms == nil {
		return
	}
	same, wake := ms[0].Summary.Median, ms[1].Summary.Median
	cross := p.get([]string{"wakeup"}, "futex_pingpong_cross_cpu")
	yield := p.r.Get("sched_yield_same_cpu")
	sys := p.r.Get("getppid")
	if yield == nil || sys == nil {
		why := "benchmark sched_yield_same_cpu did not run"
		for _, m := range p.r.Measurements {
			if m.Bench.Name == "sched_yield_same_cpu" && m.Skipped != "" {
				why = "benchmark sched_yield_same_cpu skipped: " + m.Skipped
			}
		}
		if sys == nil {
			why = "benchmark getppid did not run"
		}
		p.why["wakeup_same_core"] = why + "; the same-core wake-up is inside context_switch"
		p.set("context_switch", same-2*wake,
			fmt.Sprintf("half a futex round trip between two threads on one CPU (%s ns) minus the two futex calls in it (2 × %s ns): the switch to the thread it woke, with the same-core wake-up in it (%s)", num(same), num(wake), why), ms...)
		if cross != nil {
			c := cross[0].Summary.Median
			p.set("wakeup", c-same,
				fmt.Sprintf("half a futex round trip between threads on two CPUs (%s ns) minus the same on one CPU (%s ns): what waking a thread on another CPU adds (try_to_wake_up's IPI, the idle CPU's exit), the model charging wakeup beside context_switch", num(c), num(same)),
				append(cross, ms...)...)
		}
		return
	}
	y, g := yield.Summary.Median, sys.Summary.Median
	cs := y - g
	p.set("context_switch", cs,
		fmt.Sprintf("sched_yield between two threads on one CPU (%s ns a yield) minus the null system call (%s ns): one switch, no wake-up", num(y), num(g)), yield, sys)
	p.set("wakeup_same_core", same-2*wake-cs,
		fmt.Sprintf("half a futex round trip between two threads on one CPU (%s ns) minus its two futex calls (2 × %s ns) and the switch (%s ns): try_to_wake_up's enqueue on the waker's own run queue, the model charging wakeup_same_core beside context_switch when the woken thread runs on the waker's core", num(same), num(wake), num(cs)),
		append(ms, yield, sys)...)
	if cross == nil {
		return
	}
	c := cross[0].Summary.Median
	p.set("wakeup", c-2*wake-cs,
		fmt.Sprintf("half a futex round trip between threads on two CPUs (%s ns) minus its two futex calls (2 × %s ns) and the switch (%s ns): waking a thread on another CPU (try_to_wake_up, the IPI, the idle CPU's exit), the model charging wakeup beside context_switch when the woken thread runs on another core", num(c), num(wake), num(cs)),
		append(cross, ms[1], yield, sys)...)
}

func (p *pricer) memory() {
	if ms := p.get([]string{"copy_byte"}, "memcpy_1500"); ms != nil {
		scale := ""
		for _, n := range []string{"memcpy_64", "memcpy_65536"} {
			if m := p.r.Get(n); m != nil {
				scale += fmt.Sprintf("; %s: %s ns/byte (spread %.1f%%)", n, num(m.Summary.Median), 100*m.Summary.Spread())
			}
		}
		p.set("copy_byte", ms[0].Summary.Median,
			"copy of a 1500-byte packet, the size the stack copies (other sizes for scale, not priced"+scale+")", ms...)
	}
	if ms := p.get([]string{"checksum_byte"}, "checksum_1500"); ms != nil {
		p.set("checksum_byte", ms[0].Summary.Median, "RFC 1071 sum of a 1500-byte packet", ms...)
	}
}

func (p *pricer) kernelTCP() {
	ms := p.get([]string{"kernel_tcp_rx", "kernel_tcp_tx"}, "tcp_rr_loopback", "pipe_rr")
	if ms == nil {
		return
	}
	seg := (ms[0].Summary.Median - ms[1].Summary.Median) / 2
	rest := 0.0
	var kept []string
	for _, op := range []string{"kernel_ip_rx", "kernel_ip_tx", "softirq_packet"} {
		if _, ok := p.def[op]; ok {
			rest += p.ns(op)
			kept = append(kept, fmt.Sprintf("%s %s ns", op, num(p.ns(op))))
		}
	}
	half := (seg - rest) / 2
	method := fmt.Sprintf("(TCP round trip - pipe round trip) / 2 = %s ns per segment through the kernel's TCP and IP on loopback; minus what the model charges per segment beside TCP (%s, kept at their default prices: loopback cannot separate them) leaves %s ns, split in two equal halves between kernel_tcp_rx and kernel_tcp_tx (loopback does both on the same CPU; the split is not measured)",
		num(seg), strings.Join(kept, ", "), num(seg-rest))
	p.set("kernel_tcp_rx", half, method, ms...)
	p.set("kernel_tcp_tx", half, method, ms...)
}

func (p *pricer) compression() {
	ms := p.get(deflateOps(1, 9), "deflate_l1", "deflate_l6", "deflate_l9")
	if ms != nil {
		l1, l6, l9 := ms[0].Summary.Median, ms[1].Summary.Median, ms[2].Summary.Median
		cz := p.cZlibNote()
		for l := 1; l <= 9; l++ {
			op := fmt.Sprintf("deflate_byte_l%d", l)
			switch l {
			case 1:
				p.set(op, l1, "klauspost/compress level 1, per input byte"+cz, ms[0])
			case 6:
				p.set(op, l6, "klauspost/compress level 6, per input byte"+cz, ms[1])
			case 9:
				p.set(op, l9, "klauspost/compress level 9, per input byte"+cz, ms[2])
			case 2, 3, 4, 5:
				v := l1 + (l6-l1)*float64(l-1)/5
				p.set(op, v, fmt.Sprintf("not measured at level %d: interpolated linearly by level between the measured levels 1 (%s) and 6 (%s)%s", l, num(l1), num(l6), cz), ms[0], ms[1])
			default:
				v := l6 + (l9-l6)*float64(l-6)/3
				p.set(op, v, fmt.Sprintf("not measured at level %d: interpolated linearly by level between the measured levels 6 (%s) and 9 (%s)%s", l, num(l6), num(l9), cz), ms[1], ms[2])
			}
		}
	}
	if ms := p.get([]string{"inflate_byte"}, "inflate"); ms != nil {
		p.set("inflate_byte", ms[0].Summary.Median, "internal/inflate per output byte", ms...)
	}
	if ms := p.get([]string{"crc32_byte"}, "crc32"); ms != nil {
		p.set("crc32_byte", ms[0].Summary.Median, "hash/crc32 IEEE per byte (zlib's polynomial)", ms...)
	}
}

func deflateOps(lo, hi int) []string {
	var ops []string
	for l := lo; l <= hi; l++ {
		ops = append(ops, fmt.Sprintf("deflate_byte_l%d", l))
	}
	return ops
}

// cZlibNote sets C zlib's figures beside the Go path's, for comparison:
// the simulated zlib is zlibshim, whose software path is klauspost's.
func (p *pricer) cZlibNote() string {
	if st := cZlibStatus(); st != "" {
		return " (" + st + ")"
	}
	var parts []string
	for _, l := range []int{1, 6, 9} {
		name := fmt.Sprintf("zlib_c_l%d", l)
		if m := p.r.Get(name); m != nil {
			parts = append(parts, fmt.Sprintf("level %d %s ns/byte (spread %.1f%%)", l, num(m.Summary.Median), 100*m.Summary.Spread()))
		} else {
			parts = append(parts, fmt.Sprintf("level %d not measured", l))
		}
	}
	return fmt.Sprintf(" (C zlib %s on the same corpus, not the path Savanna prices: %s)", cZlibVersion(), strings.Join(parts, ", "))
}

// driverOps are the poll-mode driver's operations, which the stack
// benchmark's in-memory link does not price (it is not a PMD): they keep
// their default prices and are subtracted from the measured figure.
func driverOps() []string {
	return []string{"nic_rx_burst", "nic_rx_packet", "nic_tx_burst", "nic_tx_packet", "poll_idle"}
}

// stack prices the stack's own operations from its real-time figure:
// the CPU time per packet, less what the model charges per packet for
// the driver and for the operations measured by other benchmarks
// (copies, checksums), is set against what the default prices charge
// for the rest of the stack's work per packet; every stack operation the
// run charged is its default price times that ratio.
func (p *pricer) stack() {
	charged := p.stackCharged()
	ms := p.get(charged, "stack_pingpong")
	if ms == nil {
		return
	}
	m := ms[0]
	per := map[string]float64{}
	for k, v := range m.Extra {
		if _, ok := p.def[k]; ok && v > 0 {
			per[k] = v
		}
	}
	// The driver's work: from lstack's counters when the stack did not
	// charge it itself (a PMD model charges it in simulation; the
	// ringdev link charges nothing).
	stat := map[string]float64{"nic_rx_burst": m.Extra[extraRxBursts], "nic_rx_packet": 1,
		"nic_tx_burst": m.Extra[extraTxBursts], "nic_tx_packet": 1, "poll_idle": m.Extra[extraIdlePolls]}
	for _, op := range driverOps() {
		if _, ok := p.def[op]; ok && per[op] == 0 && stat[op] > 0 {
			per[op] = stat[op]
		}
	}
	var other, model float64
	var otherParts, modelParts []string
	for _, op := range sortedKeys(per) {
		n := per[op]
		if p.out[op] != nil || isDriver(op) {
			other += n * p.ns(op)
			otherParts = append(otherParts, fmt.Sprintf("%s %.3g × %s ns", op, n, num(p.ns(op))))
			continue
		}
		model += n * p.defaultNS(op, defaultGHz)
		modelParts = append(modelParts, fmt.Sprintf("%s %.3g", op, n))
	}
	if model <= 0 {
		for _, op := range charged {
			p.why[op] = "the stack benchmark charged none of the stack's own operations"
		}
		return
	}
	ratio := (m.Summary.Median - other) / model
	for _, op := range sortedKeys(per) {
		if p.out[op] != nil || isDriver(op) {
			continue
		}
		d := p.def[op]
		method := fmt.Sprintf("Savanna's stack measured %s ns of CPU per packet; the model charges per packet %s (%s ns at this file's prices), leaving %s ns for the stack's own work, which the default prices (cycles at %.1f GHz) put at %s ns for %s: ratio %.3g, times this op's default %s %s",
			num(m.Summary.Median), strings.Join(otherParts, ", "), num(other), num(m.Summary.Median-other), defaultGHz, num(model), strings.Join(modelParts, ", "), ratio, num(d.Value), d.Unit)
		p.set(op, p.defaultNS(op, defaultGHz)*ratio, method, m)
	}
}

// stackCharged are the operations the stack benchmark charged (what its
// skip would leave unmeasured).
func (p *pricer) stackCharged() []string {
	m := p.r.Get("stack_pingpong")
	if m == nil {
		return nil
	}
	var ops []string
	for k := range m.Extra {
		if _, ok := p.def[k]; ok && !isDriver(k) {
			ops = append(ops, k)
		}
	}
	sort.Strings(ops)
	return ops
}

func isDriver(op string) bool {
	for _, d := range driverOps() {
		if d == op {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// unmeasuredReason says why no benchmark here prices op.
func unmeasuredReason(op string) string {
	switch {
	case strings.HasPrefix(op, "nic_"), op == "poll_idle":
		return "a poll-mode driver's cost needs a real NIC and its PMD; the in-memory link is not one"
	case op == "interrupt", op == "softirq_packet":
		return "interrupts and NAPI receive work need a real NIC; loopback raises no interrupt and its softirq cannot be separated from the per-segment figure"
	case op == "kernel_ip_rx", op == "kernel_ip_tx":
		return "loopback TCP measures IP and TCP together; IP is kept and subtracted from the per-segment figure"
	case strings.HasPrefix(op, "qat_"), op == "usdm_alloc", op == "syscall_open", op == "syscall_ioctl", op == "syscall_mmap":
		return "the QAT driver's work and system calls need a QAT device, which this machine lacks"
	case op == "remote_numa_byte":
		return "needs memory on a second NUMA node"
	case op == "lock_contention":
		return "needs two sockets contending for a lock"
	case op == "kernel_copy_byte":
		return "no benchmark of copy_to_user alone; loopback TCP includes it in the per-segment figure"
	case op == "compaction_page", op == "page_alloc":
		return "kernel memory management is not benchmarked by simrun calibrate"
	case op == "app_nanos":
		return "an identity: applications state their work in ns"
	case op == "resp_command", op == "http_request", op == "parse_byte", strings.HasPrefix(op, "resp_"), strings.HasPrefix(op, "http_"):
		return "application work, not a micro-operation; calibration prices no workload (docs/cost-model.md, the rule for sources)"
	case strings.HasPrefix(op, "stack_"), op == "ring_op", op == "epoll_wait_user":
		return "not charged by the stack benchmark's TCP request/response"
	}
	return "simrun calibrate has no benchmark for it"
}
