// Package pktgen is a packet generator in the shape of DPDK's pktgen and
// MoonGen: it sends UDP frames from a template at a set rate on one queue
// of a port, stamps each with a sequence number and its send time, and
// measures the round trip of frames that come back (from a reflector such
// as testpmd in macswap mode). It works on the hw contracts and the
// stack's header views (ether, ipv4, udp) only, so it runs on simulated
// and real ports alike.
package pktgen

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"time"

	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/udp"
)

// minFrame is the smallest frame without FCS (64 bytes on the wire).
const minFrame = ether.MinFrameLen

// burst is the most frames moved per rx or tx burst call, DPDK's usual 32.
const burst = 32

// Config sets a generator up.
type Config struct {
	// RatePPS is frames per second; 0 sends as fast as the port takes them.
	RatePPS float64 `yaml:"rate_pps" json:"rate_pps"`
	// Size is the frame size without FCS (60 gives 64-byte frames on the wire).
	Size int `yaml:"size" json:"size"`
	// Count stops after this many frames; 0 never stops.
	Count uint64 `yaml:"count" json:"count"`
	// Flows spreads frames over this many UDP source ports, so that RSS on
	// the receiver spreads them over its queues.
	Flows int `yaml:"flows" json:"flows"`
	// SrcPort and DstPort are the UDP ports of the first flow.
	SrcPort uint16 `yaml:"src_port" json:"src_port"`
	DstPort uint16 `yaml:"dst_port" json:"dst_port"`
}

// Validate checks the configuration; errors name the key.
func (c *Config) Validate() error {
	switch {
	case c.RatePPS < 0:
		return fmt.Errorf("rate_pps: %v is negative", c.RatePPS)
	case c.Size != 0 && (c.Size < minFrame || c.Size > 9000):
		return fmt.Errorf("size: %d is outside %d..9000 (bytes without FCS)", c.Size, minFrame)
	case c.Flows < 0 || c.Flows > 65535:
		return fmt.Errorf("flows: %d is outside 0..65535", c.Flows)
	}
	return nil
}

// Endpoints are the addresses a generator's frames carry.
type Endpoints struct {
	SrcMAC, DstMAC net.HardwareAddr
	SrcIP, DstIP   netip.Addr
}

// Stats are the generator's counters since the last reset.
type Stats struct {
	TxPackets  uint64 `json:"tx_packets"`
	TxBytes    uint64 `json:"tx_bytes"`
	RxPackets  uint64 `json:"rx_packets"`
	RxForeign  uint64 `json:"rx_foreign"`   // frames received that pktgen did not send
	TxRingFull uint64 `json:"tx_ring_full"` // frames the port refused, sent again later
	NoMbuf     uint64 `json:"no_mbuf"`      // times the pool had no mbufs for a burst
	// Lost is frames sent since the reset that have not come back.
	Lost int64 `json:"lost"`
	// TxPPS and RxPPS are rates over the measurement window.
	TxPPS float64 `json:"tx_pps"`
	RxPPS float64 `json:"rx_pps"`
	// RTT is the round-trip time from send to receive, in microseconds.
	RTT latency.Summary `json:"rtt"`
}

// Generator is one pktgen instance on one queue.
type Generator struct {
	cfg      Config
	dev      hw.EthDev
	queue    int
	pool     hw.Mempool
	template []byte
	// udpOff and stampOff are where the template's UDP header and stamp
	// start, as its headers' lengths put them.
	udpOff, stampOff int

	start, windowStart time.Duration
	started            bool
	seq                uint64
	// windowSeq is the first sequence number of the measurement window:
	// a frame sent in the very instant of a reset, just before it, is
	// not the window's, whatever its time stamp says.
	windowSeq uint64
	sentTotal uint64
	stats     Stats
	rtt       *latency.Recorder
	rx, tx    [burst]*hw.Mbuf
}

// New returns a generator that sends on queue of dev with mbufs from pool.
func New(cfg Config, ep Endpoints, dev hw.EthDev, queue int, pool hw.Mempool) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Size == 0 {
		cfg.Size = minFrame
	}
	if cfg.Flows == 0 {
		cfg.Flows = 1
	}
	if cfg.SrcPort == 0 {
		cfg.SrcPort = 1024
	}
	if cfg.DstPort == 0 {
		cfg.DstPort = 9
	}
	g := &Generator{cfg: cfg, dev: dev, queue: queue, pool: pool, rtt: latency.New()}
	if err := g.buildTemplate(ep); err != nil {
		return nil, err
	}
	return g, nil
}

// buildTemplate makes the frame every packet is copied from, with the
// stack's own header representations: Ethernet, IPv4 without options
// (TTL 64, DF), UDP, then a zeroed payload where each frame's stamp goes.
func (g *Generator) buildTemplate(ep Endpoints) error {
	if !ep.SrcIP.Is4() || !ep.DstIP.Is4() {
		return fmt.Errorf("pktgen: IPv4 addresses required, have %v -> %v", ep.SrcIP, ep.DstIP)
	}
	if len(ep.SrcMAC) != len(ether.Addr{}) || len(ep.DstMAC) != len(ether.Addr{}) {
		return fmt.Errorf("pktgen: 48-bit MAC addresses required, have %v -> %v", ep.SrcMAC, ep.DstMAC)
	}
	eth := ether.Repr{Dst: ether.Addr(ep.DstMAC), Src: ether.Addr(ep.SrcMAC), EtherType: ether.TypeIPv4}
	g.udpOff = eth.HeaderLen() + ipv4.MinHeaderLen
	g.stampOff = g.udpOff + udp.HeaderLen
	if g.stampOff+stampLen > g.cfg.Size {
		return fmt.Errorf("size: %d bytes cannot hold the headers and the %d-byte stamp", g.cfg.Size, stampLen)
	}
	u := udp.Repr{SrcPort: g.cfg.SrcPort, DstPort: g.cfg.DstPort, PayloadLen: g.cfg.Size - g.stampOff}
	ip := ipv4.Repr{Src: ep.SrcIP.As4(), Dst: ep.DstIP.As4(), Protocol: ipv4.ProtoUDP,
		PayloadLen: u.BufferLen(), TTL: ipv4.DefaultTTL, DontFrag: true}
	frame := make([]byte, g.cfg.Size)
	eth.Emit(ether.Frame(frame))
	ip.Emit(ipv4.Packet(frame[eth.HeaderLen():]), true)
	u.Emit(udp.Packet(frame[g.udpOff:]), ip.Src, ip.Dst, false)
	// A zero UDP checksum means "none" over IPv4 (RFC 768), so the
	// stamp can change per frame without summing the datagram again.
	udp.Packet(frame[g.udpOff:]).SetChecksum(0)
	g.template = frame
	return nil
}

// ResetStats starts a measurement window at now.
func (g *Generator) ResetStats(now time.Duration) {
	g.stats = Stats{}
	g.rtt.Reset()
	g.windowStart, g.windowSeq = now, g.seq
}

// Stats returns the counters, with rates over the window ending at now.
func (g *Generator) Stats(now time.Duration) Stats {
	s := g.stats
	s.Lost = int64(s.TxPackets) - int64(s.RxPackets)
	if w := (now - g.windowStart).Seconds(); w > 0 {
		s.TxPPS = float64(s.TxPackets) / w
		s.RxPPS = float64(s.RxPackets) / w
	}
	s.RTT = g.rtt.Summary()
	return s
}

// RTT returns the round-trip recorder, for plots.
func (g *Generator) RTT() *latency.Recorder { return g.rtt }

// Poll receives what came back and sends what is due by now.
func (g *Generator) Poll(m hw.Meter) (bool, time.Duration) {
	now := m.Now()
	if !g.started {
		g.started, g.start = true, now
	}
	worked := g.receive(now)
	due := g.due(now)
	if due > 0 {
		worked = g.send(now, min(due, burst)) || worked
	}
	if g.cfg.Count > 0 && g.sentTotal >= g.cfg.Count {
		return worked, hw.NoDeadline
	}
	if g.cfg.RatePPS == 0 {
		return worked, now
	}
	// Frame k is due at start + k/rate (see due): the next one is frame
	// sentTotal.
	next := g.start + time.Duration(math.Ceil(float64(g.sentTotal)/g.cfg.RatePPS*1e9))
	return worked, max(next, now)
}

// due returns how many frames should have been sent by now and were not.
func (g *Generator) due(now time.Duration) uint64 {
	target := uint64(hw.NoDeadline)
	if g.cfg.RatePPS > 0 {
		target = uint64((now-g.start).Seconds()*g.cfg.RatePPS) + 1
	}
	if g.cfg.Count > 0 {
		target = min(target, g.cfg.Count)
	}
	if target <= g.sentTotal {
		return 0
	}
	return target - g.sentTotal
}

func (g *Generator) receive(now time.Duration) bool {
	n := g.dev.RxBurst(g.queue, g.rx[:])
	for _, mb := range g.rx[:n] {
		if st, ok := stampOf(mb.Data()); ok {
			// Sequence numbers travel as 32 bits: a frame is the window's
			// when it is at most 2^31 ahead of the window's first.
			if st.seq()-uint32(g.windowSeq) < 1<<31 {
				g.stats.RxPackets++
				g.rtt.Record(now - st.sent())
			}
		} else {
			g.stats.RxForeign++
		}
		mb.Free()
		g.rx[0] = nil
	}
	return n > 0
}

func (g *Generator) send(now time.Duration, n uint64) bool {
	batch := g.tx[:n]
	if !g.pool.GetBulk(batch) {
		g.stats.NoMbuf++
		return false
	}
	for _, mb := range batch {
		_ = mb.SetData(g.template)
		d := mb.Data()
		flow := uint16(g.seq % uint64(g.cfg.Flows))
		udp.Packet(d[g.udpOff:]).SetSrcPort(g.cfg.SrcPort + flow)
		stamp(d[g.stampOff:]).set(uint32(g.seq), now)
		g.seq++
	}
	sent := g.dev.TxBurst(g.queue, batch)
	for _, mb := range batch[sent:] {
		mb.Free()
		g.stats.TxRingFull++
	}
	g.seq -= uint64(len(batch) - sent)
	g.sentTotal += uint64(sent)
	g.stats.TxPackets += uint64(sent)
	g.stats.TxBytes += uint64(sent * len(g.template))
	clear(batch)
	return sent > 0
}
