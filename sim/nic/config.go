package nic

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// LinkConfig is a link in a scenario file (the `links` key): its ends,
// rate and impairments. Probabilities are per frame, from 0 to 1.
type LinkConfig struct {
	// Ends names the two ends as "host.nic" (or "switch.port").
	Ends []string `yaml:"ends"`
	// Latency is the propagation delay, the least time from the last
	// bit leaving to the last bit arriving.
	Latency time.Duration `yaml:"latency"`
	// Jitter adds a uniform random delay in [0, jitter] to each frame.
	// It never reorders frames unless Reorder is set.
	Jitter time.Duration `yaml:"jitter"`
	// Bandwidth is the link rate ("10Gbps", "25Gbit/s", "100M");
	// empty means the slower end port's speed.
	Bandwidth string `yaml:"bandwidth"`
	// Loss is the probability a frame is lost on the wire.
	Loss float64 `yaml:"loss"`
	// Duplicate is the probability a frame is delivered twice.
	Duplicate float64 `yaml:"duplicate"`
	// Reorder is the probability a frame is held back by ReorderDelay,
	// letting later frames overtake it.
	Reorder float64 `yaml:"reorder"`
	// ReorderDelay is the extra delay of a held-back frame; zero means
	// twice the latency, at least 1us.
	ReorderDelay time.Duration `yaml:"reorder_delay"`
	// Corrupt is the probability that one bit of a frame after its
	// Ethernet header is flipped with the FCS still valid (corruption
	// past the FCS check, in a middlebox): the receiver's IP or L4
	// checksum always catches a single-bit error.
	Corrupt float64 `yaml:"corrupt"`
	// CRCErrors is the probability a frame arrives with a bad FCS
	// (corruption on the wire): the receiving NIC drops it and counts
	// rx_crc_errors.
	CRCErrors float64 `yaml:"crc_errors"`
	// Flaps schedules the link going down and up again.
	Flaps []FlapConfig `yaml:"flaps"`
}

// FlapConfig is one link flap: down at At (from the start of the run)
// for DownFor; with Every set, again every Every after that, Count times
// in all (0: for ever).
type FlapConfig struct {
	At      time.Duration `yaml:"at"`
	DownFor time.Duration `yaml:"down_for"`
	Every   time.Duration `yaml:"every"`
	Count   int           `yaml:"count"`
}

// Validate checks the link's keys; errors name the key.
func (c *LinkConfig) Validate() error {
	if c.Ends != nil && len(c.Ends) != 2 {
		return fmt.Errorf("ends: %d ends given, a link has 2", len(c.Ends))
	}
	for i, e := range c.Ends {
		if e == "" {
			return fmt.Errorf("ends[%d]: empty", i)
		}
	}
	if c.Latency < 0 {
		return fmt.Errorf("latency: %v is negative", c.Latency)
	}
	if c.Jitter < 0 {
		return fmt.Errorf("jitter: %v is negative", c.Jitter)
	}
	if c.ReorderDelay < 0 {
		return fmt.Errorf("reorder_delay: %v is negative", c.ReorderDelay)
	}
	if c.Bandwidth != "" {
		if _, err := ParseBandwidth(c.Bandwidth); err != nil {
			return fmt.Errorf("bandwidth: %w", err)
		}
	}
	for _, p := range []struct {
		key string
		v   float64
	}{{"loss", c.Loss}, {"duplicate", c.Duplicate}, {"reorder", c.Reorder}, {"corrupt", c.Corrupt}, {"crc_errors", c.CRCErrors}} {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("%s: %v is not a probability in 0..1", p.key, p.v)
		}
	}
	for i, f := range c.Flaps {
		switch {
		case f.At < 0:
			return fmt.Errorf("flaps[%d].at: %v is negative", i, f.At)
		case f.DownFor <= 0:
			return fmt.Errorf("flaps[%d].down_for: %v must be positive", i, f.DownFor)
		case f.Every < 0:
			return fmt.Errorf("flaps[%d].every: %v is negative", i, f.Every)
		case f.Every > 0 && f.Every <= f.DownFor:
			return fmt.Errorf("flaps[%d].every: %v must exceed down_for %v", i, f.Every, f.DownFor)
		case f.Count < 0:
			return fmt.Errorf("flaps[%d].count: %d is negative", i, f.Count)
		case f.Count > 0 && f.Every == 0:
			return fmt.Errorf("flaps[%d].count: %d repetitions need every", i, f.Count)
		}
	}
	return nil
}

// ParseBandwidth parses a rate such as "10Gbps", "25 Gbit/s", "100M" or
// "1e9" (bits per second) into bits per second. Prefixes are decimal
// (k, M, G, T), as link speeds are.
func ParseBandwidth(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty rate")
	}
	lower := strings.ToLower(t)
	for _, suf := range []string{"bit/s", "bits/s", "b/s", "bps", "bit", "b"} {
		if strings.HasSuffix(lower, suf) {
			lower = strings.TrimSpace(strings.TrimSuffix(lower, suf))
			break
		}
	}
	mult := 1.0
	if n := len(lower); n > 0 {
		switch lower[n-1] {
		case 'k':
			mult = 1e3
		case 'm':
			mult = 1e6
		case 'g':
			mult = 1e9
		case 't':
			mult = 1e12
		}
		if mult != 1 {
			lower = strings.TrimSpace(lower[:n-1])
		}
	}
	v, err := strconv.ParseFloat(lower, 64)
	if err != nil || !(v > 0) || v*mult > 1e15 {
		return 0, fmt.Errorf("%q is not a rate such as 10Gbps", s)
	}
	return int64(v * mult), nil
}

// PortConfig is a NIC in a scenario file (an entry of a host's `nics`).
// Queue counts and rings are usually set by the stack through
// hw.EthDev; the keys here are defaults and limits the wiring applies.
type PortConfig struct {
	// Name is the port's name on its host ("eth0").
	Name string `yaml:"name"`
	// Model is a preset name (see PresetNames).
	Model string `yaml:"model"`
	// MAC is the port's address ("02:00:00:00:00:01"); empty derives a
	// locally administered one from the port's name.
	MAC string `yaml:"mac"`
	// NUMANode is the node the NIC is attached to.
	NUMANode int `yaml:"numa_node"`
	// Speed overrides the preset's link speed ("10Gbps").
	Speed string `yaml:"speed"`
	// RxQueues and TxQueues are queue counts (0: one per stack core).
	RxQueues int `yaml:"rx_queues"`
	TxQueues int `yaml:"tx_queues"`
	// RxRing and TxRing are descriptor counts (0: the preset's
	// default).
	RxRing int `yaml:"rx_ring"`
	TxRing int `yaml:"tx_ring"`
	// Mbufs is the mbufs per rx queue's pool (0: 2 * rx_ring + 1024).
	Mbufs int `yaml:"mbufs"`
	// MbufSize is the data room per mbuf, headroom included (0: 2176,
	// RTE_MBUF_DEFAULT_BUF_SIZE).
	MbufSize int `yaml:"mbuf_size"`
	// RSSKey is the Toeplitz key in hex (empty: the Microsoft key).
	RSSKey string `yaml:"rss_key"`
	// RSSHash lists the hash types: ipv4, ipv4_tcp, ipv4_udp, ipv6,
	// ipv6_tcp, ipv6_udp (empty: all of them when there are several rx
	// queues).
	RSSHash []string `yaml:"rss_hash"`
	// RxOffloads lists ipv4_cksum, tcp_cksum, udp_cksum, rss_hash.
	RxOffloads []string `yaml:"rx_offloads"`
	// TxOffloads lists ipv4_cksum, tcp_cksum, udp_cksum, multi_segs.
	TxOffloads []string `yaml:"tx_offloads"`
}

// DefaultMbufSize mirrors RTE_MBUF_DEFAULT_BUF_SIZE: 2048 bytes of data
// plus the 128-byte headroom.
const DefaultMbufSize = 2048 + hw.DefaultHeadroom

// Validate checks the port's keys against its preset; errors name the
// key.
func (c *PortConfig) Validate() error {
	if c.Name == "" {
		return errors.New("name: empty")
	}
	model := c.Model
	if model == "" {
		return errors.New("model: empty; one of " + strings.Join(PresetNames(), ", "))
	}
	p, err := Preset(model)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if c.MAC != "" {
		if _, err := parseMAC(c.MAC); err != nil {
			return fmt.Errorf("mac: %w", err)
		}
	}
	if c.NUMANode < 0 {
		return fmt.Errorf("numa_node: %d is negative", c.NUMANode)
	}
	if c.Speed != "" {
		if _, err := ParseBandwidth(c.Speed); err != nil {
			return fmt.Errorf("speed: %w", err)
		}
	}
	if c.RxQueues < 0 || c.RxQueues > p.MaxRxQueues {
		return fmt.Errorf("rx_queues: %d is outside %s's range 1..%d", c.RxQueues, p.Name, p.MaxRxQueues)
	}
	if c.TxQueues < 0 || c.TxQueues > p.MaxTxQueues {
		return fmt.Errorf("tx_queues: %d is outside %s's range 1..%d", c.TxQueues, p.Name, p.MaxTxQueues)
	}
	if c.RxRing != 0 {
		if err := p.checkRing(c.RxRing); err != nil {
			return fmt.Errorf("rx_ring: %w", err)
		}
	}
	if c.TxRing != 0 {
		if err := p.checkRing(c.TxRing); err != nil {
			return fmt.Errorf("tx_ring: %w", err)
		}
	}
	if c.Mbufs < 0 {
		return fmt.Errorf("mbufs: %d is negative", c.Mbufs)
	}
	if c.MbufSize != 0 && c.MbufSize <= hw.DefaultHeadroom {
		return fmt.Errorf("mbuf_size: %d must exceed the %d-byte headroom", c.MbufSize, hw.DefaultHeadroom)
	}
	if c.RSSKey != "" {
		if _, err := parseRSSKey(c.RSSKey, p.HashKeySize); err != nil {
			return fmt.Errorf("rss_key: %w", err)
		}
	}
	if _, err := ParseRSSHashTypes(c.RSSHash); err != nil {
		return fmt.Errorf("rss_hash: %w", err)
	}
	if _, err := ParseRxOffloads(c.RxOffloads); err != nil {
		return fmt.Errorf("rx_offloads: %w", err)
	}
	if _, err := ParseTxOffloads(c.TxOffloads); err != nil {
		return fmt.Errorf("tx_offloads: %w", err)
	}
	return nil
}

// parseRSSKey decodes a hex key of RSSKeyLen or the preset's key size.
func parseRSSKey(s string, keySize int) ([]byte, error) {
	k, err := hex.DecodeString(strings.ReplaceAll(strings.ReplaceAll(s, ":", ""), " ", ""))
	if err != nil {
		return nil, fmt.Errorf("%q is not hex", s)
	}
	if len(k) != RSSKeyLen && len(k) != keySize {
		return nil, fmt.Errorf("%d bytes; want %d or %d", len(k), RSSKeyLen, keySize)
	}
	return k, nil
}

// flagName is one scenario name of a flag.
type flagName[F ~uint32 | ~uint64] struct {
	name string
	flag F
}

// parseFlags ORs the flags that names name (case-insensitive), or names
// the first unknown one and lists the known.
func parseFlags[F ~uint32 | ~uint64](names []string, known []flagName[F]) (F, error) {
	var out F
	for _, n := range names {
		found := false
		for _, k := range known {
			if strings.EqualFold(n, k.name) {
				out |= k.flag
				found = true
				break
			}
		}
		if !found {
			list := make([]string, len(known))
			for i, k := range known {
				list[i] = k.name
			}
			return 0, fmt.Errorf("%q: unknown; expected one of %s", n, strings.Join(list, ", "))
		}
	}
	return out, nil
}

// ParseRSSHashTypes parses hash type names (ipv4, ipv4_tcp, ipv4_udp,
// ipv6, ipv6_tcp, ipv6_udp).
func ParseRSSHashTypes(names []string) (hw.RSSHashType, error) {
	return parseFlags(names, []flagName[hw.RSSHashType]{
		{"ipv4", hw.RSSIPv4}, {"ipv4_tcp", hw.RSSIPv4TCP}, {"ipv4_udp", hw.RSSIPv4UDP},
		{"ipv6", hw.RSSIPv6}, {"ipv6_tcp", hw.RSSIPv6TCP}, {"ipv6_udp", hw.RSSIPv6UDP},
	})
}

// ParseRxOffloads parses rx offload names (ipv4_cksum, tcp_cksum,
// udp_cksum, rss_hash).
func ParseRxOffloads(names []string) (hw.RxOffloads, error) {
	return parseFlags(names, []flagName[hw.RxOffloads]{
		{"ipv4_cksum", hw.RxOffloadIPv4Checksum}, {"tcp_cksum", hw.RxOffloadTCPChecksum},
		{"udp_cksum", hw.RxOffloadUDPChecksum}, {"rss_hash", hw.RxOffloadRSSHash},
	})
}

// ParseTxOffloads parses tx offload names (ipv4_cksum, tcp_cksum,
// udp_cksum, multi_segs).
func ParseTxOffloads(names []string) (hw.TxOffloads, error) {
	return parseFlags(names, []flagName[hw.TxOffloads]{
		{"ipv4_cksum", hw.TxOffloadIPv4Checksum}, {"tcp_cksum", hw.TxOffloadTCPChecksum},
		{"udp_cksum", hw.TxOffloadUDPChecksum}, {"multi_segs", hw.TxOffloadMultiSegs},
	})
}

// SwitchConfig is a learning switch in a scenario file.
type SwitchConfig struct {
	Name string `yaml:"name"`
	// Ports is the number of ports.
	Ports int `yaml:"ports"`
	// ForwardDelay is the store-and-forward latency from a frame's last
	// bit in to the start of its transmission out.
	ForwardDelay time.Duration `yaml:"forward_delay"`
	// BufferBytes bounds each output port's queue; a frame that would
	// exceed it is dropped (0: 512 KiB).
	BufferBytes int `yaml:"buffer_bytes"`
	// MACTableSize bounds the learned addresses (0: 8192); when full,
	// new addresses are not learned and their frames are flooded.
	MACTableSize int `yaml:"mac_table_size"`
}

// Validate checks the switch's keys; errors name the key.
func (c *SwitchConfig) Validate() error {
	switch {
	case c.Name == "":
		return errors.New("name: empty")
	case c.Ports < 2:
		return fmt.Errorf("ports: %d; a switch needs at least 2", c.Ports)
	case c.ForwardDelay < 0:
		return fmt.Errorf("forward_delay: %v is negative", c.ForwardDelay)
	case c.BufferBytes < 0:
		return fmt.Errorf("buffer_bytes: %d is negative", c.BufferBytes)
	case c.MACTableSize < 0:
		return fmt.Errorf("mac_table_size: %d is negative", c.MACTableSize)
	}
	return nil
}
