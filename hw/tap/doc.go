// Package tap is an hw.EthDev over a Linux TAP device (/dev/net/tun with
// IFF_TAP|IFF_NO_PI: raw Ethernet frames), for live mode: Savanna's stack
// on one side, the Linux kernel's on the other. It is the Go form of
// DPDK's net_tap PMD (drivers/net/tap) without its flow offloads.
//
// Each queue is one file descriptor of a multi-queue TAP
// (IFF_MULTI_QUEUE, Documentation/networking/tuntap.rst): RxBurst reads
// one frame per read(2), non-blocking and bounded by the burst, into
// mbufs from the queue's pool; TxBurst writes one frame per write(2).
// The kernel spreads flows over the queues itself (tun's automatic flow
// steering remembers the queue a flow was last sent on), so the port has
// no RSS redirection table: RETA and SetRETA report that clearly.
//
// A watcher goroutine per queue waits for readability through Go's
// network poller and calls the function given to SetRxNotify, so the
// real-time driver can park an idle lcore instead of spinning.
package tap
