// Package testpmd is a forwarder in the shape of DPDK's testpmd: it
// receives bursts on a queue and sends them back out, either as they are
// (io mode) or with source and destination MAC addresses swapped (macswap
// mode), which reflects a generator's frames to it.
package testpmd

import (
	"fmt"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
)

const burst = 32

// Mode is a forwarding mode.
type Mode string

// Forwarding modes, named as testpmd's --forward-mode.
const (
	ModeIO      Mode = "io"
	ModeMACSwap Mode = "macswap"
)

// Config sets a forwarder up.
type Config struct {
	Forward Mode `yaml:"forward" json:"forward"`
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch c.Forward {
	case "", ModeIO, ModeMACSwap:
		return nil
	}
	return fmt.Errorf("forward: mode %q; expected io or macswap", c.Forward)
}

// Stats are testpmd's per-stream counters.
type Stats struct {
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	// TxDropped are frames the tx ring refused, freed as testpmd does.
	TxDropped uint64 `json:"tx_dropped"`
}

// Forwarder forwards one queue of a port back out of the same queue.
type Forwarder struct {
	mode  Mode
	dev   hw.EthDev
	queue int
	stats Stats
	pkts  [burst]*hw.Mbuf
}

// New returns a forwarder on queue of dev.
func New(cfg Config, dev hw.EthDev, queue int) (*Forwarder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Forward == "" {
		cfg.Forward = ModeMACSwap
	}
	return &Forwarder{mode: cfg.Forward, dev: dev, queue: queue}, nil
}

// Poll forwards one burst.
func (f *Forwarder) Poll(m hw.Meter) (bool, time.Duration) {
	n := f.dev.RxBurst(f.queue, f.pkts[:])
	if n == 0 {
		return false, hw.NoDeadline
	}
	f.stats.RxPackets += uint64(n)
	if f.mode == ModeMACSwap {
		// A runt without a whole Ethernet header has no addresses to
		// swap: it goes back as it came.
		for _, mb := range f.pkts[:n] {
			if e := ether.Frame(mb.Data()); len(e) >= ether.HeaderLen {
				e.SwapAddrs()
			}
		}
	}
	sent := f.dev.TxBurst(f.queue, f.pkts[:n])
	for _, mb := range f.pkts[sent:n] {
		mb.Free()
	}
	f.stats.TxPackets += uint64(sent)
	f.stats.TxDropped += uint64(n - sent)
	clear(f.pkts[:n])
	return true, hw.NoDeadline
}

// ResetStats zeroes the counters.
func (f *Forwarder) ResetStats(time.Duration) { f.stats = Stats{} }

// Stats returns the counters.
func (f *Forwarder) Stats(time.Duration) Stats { return f.stats }
