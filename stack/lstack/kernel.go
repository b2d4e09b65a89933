package lstack

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// Mode says what the instance's work costs: Savanna's user-space stack
// (Gazelle's lstack) or the Linux kernel's stack running the same
// engines. The kernel mode is a cost model, not a kernel: the protocol
// code is the same, and only the prices charged differ (docs/lstack.md).
type Mode int

// Modes.
const (
	// ModeLstack: a poll-mode lcore, zero system calls, one copy per
	// byte between the application's buffer and the stack's.
	ModeLstack Mode = iota
	// ModeKernel: interrupts and softirq per packet, a system call per
	// socket call, a copy per byte between user and kernel, wake-ups and
	// context switches when a sleeping thread has work.
	ModeKernel
)

func (m Mode) String() string {
	if m == ModeKernel {
		return "kernel"
	}
	return "lstack"
}

// kernelMeter charges the kernel's prices for the work the engines
// report: protocol processing becomes the kernel's (softirq, tcp_v4_rcv,
// ip_rcv ...), and a receive burst that found packets costs an interrupt,
// NAPI's coalescing of the packets behind it being what the burst models.
type kernelMeter struct {
	hw.Meter
}

// Charge implements hw.Meter.
func (k kernelMeter) Charge(op hw.CostOp, n int64) {
	switch op {
	case hw.CostNICRxBurst:
		// The interrupt is charged in Poll, once per burst with packets.
	case hw.CostNICRxPacket:
		k.Meter.Charge(hw.CostSoftirqPacket, n)
	case hw.CostNICTxBurst, hw.CostNICTxPacket:
		// The driver's transmit work is in the kernel's IP output price.
	case hw.CostPollIdle:
		// A kernel core sleeps instead of spinning.
	case hw.CostStackEthRx:
		// Part of softirq_packet.
	case hw.CostStackIPRx:
		k.Meter.Charge(hw.CostKernelIPRx, n)
	case hw.CostStackIPTx:
		k.Meter.Charge(hw.CostKernelIPTx, n)
	case hw.CostStackTCPRx:
		k.Meter.Charge(hw.CostKernelTCPRx, n)
	case hw.CostStackTCPTx:
		k.Meter.Charge(hw.CostKernelTCPTx, n)
	case hw.CostCopyByte:
		// Copies inside the stack are the kernel's skb copies.
		k.Meter.Charge(hw.CostKernelCopyByte, n)
	default:
		k.Meter.Charge(op, n)
	}
}

// Now implements hw.Meter.
func (k kernelMeter) Now() time.Duration { return k.Meter.Now() }

// Idle implements hw.Meter.
func (k kernelMeter) Idle(d time.Duration) { k.Meter.Idle(d) }
