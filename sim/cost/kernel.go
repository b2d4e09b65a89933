package cost

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// KernelPath is a meter decorator that prices the work of a network stack
// as Linux's kernel spends it, for a host whose scenario says
// stack.kind: kernel. The protocol code is the same engines the
// user-space stack runs; only what their work costs differs, and that is a
// model, so it lives here with the prices and not in stack/. The rig puts
// it between a kernel-stack core and both the NIC queue it serves and the
// stack instance it runs.
//
// What a received packet costs on such a core is an interrupt per burst
// that found packets (NAPI coalesces the packets behind it, which the
// burst models), softirq work per packet and the kernel's IP and TCP
// input (ip_rcv, tcp_v4_rcv); no DPDK driver price. Transmit is the
// kernel's IP and TCP output, the driver's part included. A kernel core
// sleeps instead of spinning, so idle polls cost nothing.
//
// The same decorator prices the stack thread's side of the socket bridge
// on such a core (stack/lstack.Bridge): there is no ring and no stack
// thread serving socket calls in the kernel (the system call's work is
// the protocol's), and the softirq wakes a sleeping reader with
// try_to_wake_up directly, not with a futex system call. What the
// application's side of the same calls costs is KernelSyscalls.
//
// It also prices, on the calling thread's core, the transmit a thread's
// own socket calls queue (the segments of a write, a close's FIN, the
// window update after a read): Linux runs tcp_sendmsg -> tcp_push ->
// tcp_write_xmit -> ip_queue_xmit -> dev_queue_xmit in the system
// call's context (net/ipv4/tcp.c, net/ipv4/tcp_output.c), and only
// ACK-clocked sends, retransmits and delayed ACKs in softirq on the
// interrupt CPU (internal/simhost wires it with
// stack/lstack.Instance.SetSenderMeter; such a meter has no doorbell).
//
// The stack engines' payload copies are not Linux's and are not charged
// here: the only copy Linux makes of a segment's payload is between the
// application's buffer and the skb, copy_from_user in tcp_sendmsg
// (skb_copy_to_page_nocache) and copy_to_user in tcp_recvmsg
// (skb_copy_datagram_iter), both in the system call and priced on the
// caller's side by KernelSyscalls. tcp_write_xmit transmits a clone of
// the queued skb (__tcp_transmit_skb's skb_clone), which a NIC reads by
// DMA or a veth hands on as it is; a received skb waits in the socket's
// receive queue as it arrived. The engines' copies from a send buffer
// into a frame, from a socket's ring into TCP's buffer and from a
// received segment into the socket's ring are the simulation's
// plumbing.
//
// With SetConnCache it also charges each segment the misses of its
// connection's kernel state once the core's connections outgrow its
// private cache (ConnCache).
type KernelPath struct {
	m     hw.Meter
	p     ProductOps
	wake  func(at time.Duration)
	conns *connMisses
}

// NewKernelPath decorates m; p names the product's operations it prices
// (internal/costops.KernelModelOps); wake, when not nil, is the core's doorbell,
// so that the decorated meter can be bound to a NIC queue.
func NewKernelPath(m hw.Meter, p ProductOps, wake func(at time.Duration)) *KernelPath {
	return &KernelPath{m: m, p: p, wake: wake}
}

// SetConnCache makes every kernel TCP segment this meter prices (input
// and output) also pay c's misses for the connections active() says the
// core serves, read at each charge. A disabled c, or a nil active,
// charges nothing.
func (k *KernelPath) SetConnCache(c ConnCache, active func() int) {
	if !c.Enabled() || active == nil {
		k.conns = nil
		return
	}
	k.conns = &connMisses{c: c, active: active}
}

// Now implements hw.Meter.
func (k *KernelPath) Now() time.Duration { return k.m.Now() }

// Idle implements hw.Meter.
func (k *KernelPath) Idle(d time.Duration) { k.m.Idle(d) }

// DrainsRx implements sim/nic.RxDrainer: Linux's interrupt and NAPI
// softirq take each frame off the NIC's ring as it lands and queue it on
// its socket (net/core/dev.c net_rx_action), preempting the thread on
// the CPU, so the buffer a burst fills is the sockets' receive queues,
// not the descriptor ring. The softirq's price is still charged per
// packet when the core's stack takes the frame.
func (k *KernelPath) DrainsRx() bool { return true }

// Wake rings the decorated core's doorbell.
func (k *KernelPath) Wake(at time.Duration) {
	if k.wake != nil {
		k.wake(at)
	}
}

// Charge implements hw.Meter: the user-space stack's and the PMD's
// operations become the kernel's; every other operation is charged as it
// is.
func (k *KernelPath) Charge(op hw.CostOp, n int64) {
	switch op {
	case hw.CostNICRxBurst, k.p.FrameRx:
		// The interrupt is charged with the burst's packets below; the
		// Ethernet demultiplexing is part of softirq_packet.
	case hw.CostNICRxPacket:
		if n > 0 {
			k.m.Charge(Interrupt, 1)
			k.m.Charge(SoftirqPacket, n)
		}
	case hw.CostNICTxBurst, hw.CostNICTxPacket:
		// The driver's transmit work is in the kernel's IP output price.
	case hw.CostPollIdle:
		// A kernel core sleeps instead of spinning.
	case k.p.IPRx:
		k.m.Charge(KernelIPRx, n)
	case k.p.IPTx:
		k.m.Charge(KernelIPTx, n)
	case k.p.TCPRx:
		k.m.Charge(KernelTCPRx, n)
		k.conns.charge(k.m, n)
	case k.p.TCPTx:
		k.m.Charge(KernelTCPTx, n)
		k.conns.charge(k.m, n)
	case hw.CostCopyByte:
		// The engines' copies of payload are not Linux's (see
		// KernelPath): the one copy is the system call's.
	case k.p.SocketCall, k.p.RingOp:
		// The stack thread's service of a socket call and its ring
		// operations: in the kernel the call is the protocol's work,
		// already priced, and no ring exists.
	case hw.CostSyscall, hw.CostSyscallFutex:
		// lstack's stack thread wakes a sleeping application thread
		// with a futex system call; the kernel's softirq wakes it
		// directly (the wake-up itself is charged as it is).
	default:
		k.m.Charge(op, n)
	}
}
