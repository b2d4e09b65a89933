package lstack

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// On Linux a send(2) or write(2) runs the protocol's transmit path in
// the calling thread's context, on the caller's CPU: tcp_sendmsg copies
// the bytes and calls tcp_push, whose __tcp_push_pending_frames ->
// tcp_write_xmit -> tcp_transmit_skb -> ip_queue_xmit -> dev_queue_xmit
// emits every segment the windows allow (net/ipv4/tcp.c,
// net/ipv4/tcp_output.c, net/ipv4/ip_output.c). recvmsg's window update
// (tcp_cleanup_rbuf -> tcp_send_ack) and close(2)'s FIN run there too.
// Only what an incoming segment releases (data an ACK lets out,
// tcp_data_snd_check from tcp_rcv_established), retransmits from the RTO
// timer and delayed ACKs run in softirq or timer context, on the CPU
// that took the interrupt. The engines here do a socket call's protocol
// work on the stack's core (the Bridge serves the call, the instance's
// next turn flushes it), which is Gazelle's shape; a binding that stands
// for the kernel says, with SetSenderMeter, that a socket call's own
// segments are charged on the core of the thread that made the call.

// sender is the instance's switch of the meter its layers charge while
// TCP flushes a socket call's work: the caller's debt for the
// connection flushed, the stack core's meter otherwise. Its clock is
// always the stack core's: the segments leave from the stack's queue.
//
// The flush runs in the stack core's turn, after the call reached it,
// while the caller's core is between turns; a core is charged only in
// its own turns (sim.Core), so the work is kept as the caller's debt
// and paid on the caller's core at the thread's next socket call or
// wait (pay): the thread's core does the work and its later calls wait
// for it, a few microseconds after Linux's would, where the send(2)
// itself would have returned later.
type sender struct {
	base, cur hw.Meter
	wrap      func(hw.Meter) hw.Meter
	debts     map[hw.Meter]*debt
}

// debt is the transmit work a thread owes its core: what the flushes of
// its calls charged since it last paid.
type debt struct {
	owner hw.Meter // wrap(the thread's meter)
	ops   []owed
	now   func() time.Duration
}

type owed struct {
	op hw.CostOp
	n  int64
}

// Now implements hw.Meter: the stack core's clock, where the flush runs.
func (d *debt) Now() time.Duration { return d.now() }

// Idle implements hw.Meter: a flush does not wait.
func (d *debt) Idle(time.Duration) {}

// Charge implements hw.Meter: the work is owed, summed per operation.
func (d *debt) Charge(op hw.CostOp, n int64) {
	for i := range d.ops {
		if d.ops[i].op == op {
			d.ops[i].n += n
			return
		}
	}
	d.ops = append(d.ops, owed{op: op, n: n})
}

// pay charges the thread whose meter is m what it owes this instance's
// flushes, on m decorated as SetSenderMeter's wrap says. Every
// application-side call of the instance's sockets and epolls pays
// first.
func (in *Instance) pay(m hw.Meter) {
	if in.send == nil || m == nil {
		return
	}
	d := in.send.debts[m]
	if d == nil || len(d.ops) == 0 {
		return
	}
	for _, o := range d.ops {
		d.owner.Charge(o.op, o.n)
	}
	d.ops = d.ops[:0]
}

// SetSenderMeter makes the instance charge what TCP sends for an
// application thread's socket calls (the segments of a write, the FIN of
// a close, the window update after a read; tcp.Stack.SetFlushHook) on
// the meter wrap makes of the meter that thread's last call on the
// connection was charged to, instead of the stack core's: Linux's
// transmit in the system call's context (a connect's SYN too). The
// thread pays it at its next call on the instance's sockets or epolls
// (see sender). ACK-clocked sends, retransmits and delayed ACKs stay on
// the stack core. nil, the default
// (Gazelle: the stack thread sends), charges everything on the stack
// core. Connections with no application thread (an event loop on the
// stack's core that calls the instance itself) are charged on the stack
// core, which is that thread's core. Call it before the instance is
// polled; it is for virtual time, where every core runs on one
// goroutine.
func (in *Instance) SetSenderMeter(wrap func(hw.Meter) hw.Meter) {
	in.meter = nil // the layers get the switch at the next Poll
	if wrap == nil {
		in.send = nil
		in.tcp.SetFlushHook(nil)
		return
	}
	in.send = &sender{wrap: wrap}
	in.tcp.SetFlushHook(in.flushing)
}

// layerMeter returns the meter the layers charge during a turn on m.
func (in *Instance) layerMeter(m hw.Meter) hw.Meter {
	if in.send == nil {
		return m
	}
	in.send.base, in.send.cur = m, m
	return in.send
}

// flushing is TCP's flush hook: c's queued socket-call work is about to
// be sent (nil: it was).
func (in *Instance) flushing(c *tcp.Conn) {
	s := in.send
	s.cur = s.base
	if c == nil {
		return
	}
	for _, b := range in.bridges {
		if sk := b.socks[c]; sk != nil && sk.caller != nil {
			s.cur = s.debtOf(sk.caller)
			return
		}
	}
}

// callerSends charges what TCP sends from now to callerSent to the
// thread that made s's call (a connect's SYN), when the instance prices
// a call's transmit on its caller.
func (in *Instance) callerSends(s *Socket) {
	if in.send != nil && s.caller != nil && in.send.base != nil {
		in.send.cur = in.send.debtOf(s.caller)
	}
}

// callerSent ends callerSends.
func (in *Instance) callerSent() {
	if in.send != nil {
		in.send.cur = in.send.base
	}
}

// debtOf returns the debt of the thread whose meter is m, made once.
func (s *sender) debtOf(m hw.Meter) *debt {
	if d, ok := s.debts[m]; ok {
		return d
	}
	if s.debts == nil {
		s.debts = map[hw.Meter]*debt{}
	}
	d := &debt{owner: s.wrap(m), now: s.Now}
	s.debts[m] = d
	return d
}

// Now implements hw.Meter: the stack core's clock.
func (s *sender) Now() time.Duration { return s.base.Now() }

// Idle implements hw.Meter.
func (s *sender) Idle(d time.Duration) { s.base.Idle(d) }

// Charge implements hw.Meter: on the caller's meter while a socket
// call's work is flushed, on the stack core's otherwise. The engines'
// copy of payload into the frame is not moved: Linux's send copies the
// bytes once, copy_from_user in tcp_sendmsg, which the caller's system
// call is already charged (cost.KernelSyscalls), and the frame reaches
// the NIC by DMA; the engine's copy stays where it was charged before.
func (s *sender) Charge(op hw.CostOp, n int64) {
	if op == hw.CostCopyByte {
		s.base.Charge(op, n)
		return
	}
	s.cur.Charge(op, n)
}

// noteCaller records the meter of the thread calling on s, for the
// flush of what the call queued.
func (s *Socket) noteCaller(m hw.Meter) {
	if s.b.in.send != nil {
		s.caller = m
		s.b.in.pay(m)
	}
}
