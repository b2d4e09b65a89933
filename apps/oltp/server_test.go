package oltp_test

import (
	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/sim/cost"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
)

var _ = Describe("a server and a client on two simulated hosts", func() {
	const (
		warmup = 10 * time.Millisecond
		window = 20 * time.Millisecond
	)

	It("counts every statement once, on both sides, and QPS as statements over the window", func() {
		b := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 4, terminals: 16, seed: 1})
		b.run(warmup, window)
		now := b.eng.Now()
		cs, ss := b.client.Stats(now), b.server.Stats(now)
		Expect(cs.Terminals).To(Equal(16))
		Expect(cs.Errors + cs.ProtocolErrors + cs.Disconnects + cs.ConnectFailures).To(BeZero())
		Expect(cs.Statements).To(BeNumerically(">", 1000))
		// Statements in flight at either edge of the window: one per
		// terminal at most.
		Expect(int64(ss.Queries) - int64(cs.Statements)).To(BeNumerically("~", 0, 16))
		Expect(cs.QPS).To(BeNumerically("~", float64(cs.Statements)/window.Seconds(), 1e-6))
		var byClass uint64
		for _, n := range ss.ByClass {
			byClass += n
		}
		Expect(byClass).To(Equal(ss.Queries))
		var txns, stmts float64
		for _, t := range cs.Txn {
			txns += float64(t.Count)
			stmts += float64(t.Count) * t.Statements
		}
		Expect(txns).To(BeEquivalentTo(cs.Transactions))
		Expect(cs.TpmC).To(BeNumerically("~", float64(cs.Txn["new_order"].Count)/window.Seconds()*60, 1e-6))
		// Statements of whole transactions cannot exceed those answered
		// plus the ones begun before the window.
		Expect(stmts).To(BeNumerically("<=", float64(cs.Statements)+16*71))
	})

	It("charges the query engine's time and a context switch per thread switch on the application cores", func() {
		b := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 2, terminals: 8, seed: 2})
		b.run(warmup, window)
		ss := b.server.Stats(b.eng.Now())
		sched := b.server.Scheduler().Stats()
		// More threads than cores: nearly every burst starts with a switch.
		Expect(sched.Switches).To(BeNumerically(">", sched.Runs*9/10))
		Expect(b.appOps(hw.CostContextSwitch)).To(BeEquivalentTo(sched.Switches))
		Expect(float64(b.appOps(appcost.Nanos)) / 1e3).To(BeNumerically("~", ss.QueryCPUUS, ss.QueryCPUUS*0.01))
		// lstack: the threads' socket calls cross rings, no system call
		// but the futex wait of a thread that sleeps.
		Expect(b.appOps(lstack.CostRingOp)).To(BeNumerically(">", 0))
		Expect(b.appOps(hw.CostSyscall)).To(Equal(b.appOps(hw.CostSyscallFutex)))
		Expect(b.appOps(cost.KernelCopyByte)).To(BeZero())
		// The stack thread pays the wake-ups, a futex wake each.
		Expect(b.stack.Stats().Ops[hw.CostWakeup]).To(BeNumerically(">", 0))
	})

	It("makes a thread's socket calls system calls on the kernel's stack", func() {
		b := newBed(bedConfig{mode: lstack.ModeKernel, appCores: 2, terminals: 8, seed: 2})
		b.run(warmup, window)
		Expect(b.appOps(lstack.CostRingOp)).To(BeZero())
		Expect(b.appOps(hw.CostSyscallFutex)).To(BeZero())
		Expect(b.appOps(hw.CostSyscall)).To(BeNumerically(">", 3*int64(b.server.Stats(b.eng.Now()).Queries)))
		Expect(b.appOps(cost.KernelCopyByte)).To(BeNumerically(">", 0))
		Expect(b.stack.Stats().Ops[cost.KernelTCPRx]).To(BeNumerically(">", 0))
		Expect(b.stack.Stats().Ops[hw.CostWakeup]).To(BeNumerically(">", 0))
	})

	// The bed gives the kernel's protocol work a core of its own, as the
	// user-space stack has: the application cores then do the same work
	// either way but for the socket calls, and only the latency of the
	// kernel's path (interrupt, softirq, wake-up) tells them apart.
	DescribeTable("gains from the user-space stack, but much less than Redis",
		func(terminals int, atLeast, atMost float64) {
			run := func(mode lstack.Mode) float64 {
				b := newBed(bedConfig{mode: mode, appCores: 4, terminals: terminals, seed: 3})
				b.run(warmup, window)
				return b.client.Stats(b.eng.Now()).QPS
			}
			k, l := run(lstack.ModeKernel), run(lstack.ModeLstack)
			Expect(l/k).To(And(BeNumerically(">", atLeast), BeNumerically("<", atMost)), "kernel %.0f, lstack %.0f QPS", k, l)
		},
		Entry("latency-bound: a few terminals", 4, 1.02, 1.6),
		Entry("CPU-bound: four terminals per core", 16, 0.95, 1.3),
	)

	It("is deterministic: the same seed gives the same figures", func() {
		run := func() any {
			b := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 3, terminals: 12, seed: 9})
			b.run(warmup, window)
			return []any{b.client.Stats(b.eng.Now()), b.server.Stats(b.eng.Now()), b.server.Scheduler().Stats(), b.bridge.Stats()}
		}
		Expect(run()).To(Equal(run()))
	})

	It("refuses connections beyond max_connections with MySQL's error", func() {
		b := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 2, terminals: 8, seed: 4, maxConns: 5})
		b.eng.RunUntil(warmup)
		now := b.eng.Now()
		Expect(b.server.Stats(now).Refused).To(BeEquivalentTo(3))
		cs := b.client.Stats(now)
		Expect(cs.Terminals).To(Equal(5))
		Expect(cs.Disconnects).To(BeEquivalentTo(3))
		Expect(cs.Errors).To(BeEquivalentTo(3))
	})
})
