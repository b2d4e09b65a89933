package nic

import "github.com/savanna-sim/savanna/hw"

// RxDrainer is a queue's core (BindQueue) that takes received frames off
// the descriptor ring as they land, the way Linux's network path does: the
// NIC's interrupt schedules NAPI, whose poll (net_rx_action, within
// net.core.netdev_budget = 300 packets and netdev_budget_usecs = 2 ms a
// round, napi weight 64 per queue) refills the descriptors and runs each
// packet through GRO, IP and TCP into its socket's receive queue
// (net/core/dev.c, net/ipv4/tcp_input.c tcp_data_queue). The softirq
// preempts whatever thread runs on the CPU, so the ring drains within
// microseconds of the interrupt and the buffer a burst fills is the
// sockets' receive queues (each up to its sk_rcvbuf, net.ipv4.tcp_rmem),
// not the ring.
//
// The model keeps the frame order and the prices as they are (the
// softirq's work is charged when the core's stack takes the frames, on
// the core's next turn) and only moves where the frames wait: a queue
// bound to an RxDrainer that says true puts each frame on the queue's
// software backlog instead of its descriptor ring, so the ring never
// overflows. What bounds the backlog is the queue's mempool, the model's
// stand-in for the skbs' memory (a frame it cannot hold is rx_nombuf,
// counted), and, before that, TCP's flow control: a sender never has more
// unread bytes in flight than the receiver's window, which its socket
// buffer sets. The backlog's high-water mark is the queue's backlog_peak.
type RxDrainer interface {
	DrainsRx() bool
}

// drains reports whether core drains its queue's ring at once (RxDrainer).
func drains(core QueueCore) bool {
	d, ok := core.(RxDrainer)
	return ok && d.DrainsRx()
}

// enqueue puts a received frame where the queue's poller will find it:
// the software backlog of a draining queue, the descriptor ring
// otherwise. It reports false when the ring is full (imissed).
func (rq *rxQueue) enqueue(m *hw.Mbuf) bool {
	if !rq.drain {
		return rq.ring.push(m)
	}
	rq.backlog.push(m)
	if n := uint64(rq.backlog.len()); n > rq.stats.BacklogPeak {
		rq.stats.BacklogPeak = n
	}
	return true
}

// dequeue takes up to len(pkts) frames, the backlog's first.
func (rq *rxQueue) dequeue(pkts []*hw.Mbuf) int {
	n := 0
	for n < len(pkts) && rq.backlog.len() > 0 {
		pkts[n] = rq.backlog.pop()
		n++
	}
	for n < len(pkts) && rq.ring.len() > 0 {
		pkts[n] = rq.ring.pop()
		n++
	}
	return n
}

// pending is the frames waiting for the queue's poller.
func (rq *rxQueue) pending() int { return rq.backlog.len() + rq.ring.len() }
