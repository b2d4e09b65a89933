package ringdev

import (
	"fmt"
	"net"
)

// Limits of a ring port.
const (
	// MaxQueues is the most rx or tx queues a ring port offers
	// (RTE_PMD_RING_MAX_RX_RINGS is 16 in DPDK's net_ring).
	MaxQueues = 16
	// MaxRing is the largest descriptor ring.
	MaxRing = 1 << 16
	// MinRing is the smallest descriptor ring.
	MinRing = 32
	// RETASize is the redirection table's size (as on Intel 82599).
	RETASize = 128
)

// Config describes one port of a pair.
type Config struct {
	// Name names the port in errors and statistics.
	Name string `yaml:"name"`
	// MAC is the port's Ethernet address ("02:00:00:00:00:01"); empty
	// derives a locally administered one from the port's index in the pair.
	MAC string `yaml:"mac"`
	// MTU is the largest IP datagram the port sends and accepts (default
	// 1500); frames longer than MTU+14 count as oerrors and are dropped.
	MTU int `yaml:"mtu"`
	// SpeedMbps is the nominal link speed reported (default 10000); the
	// rings do not pace.
	SpeedMbps int `yaml:"speed_mbps"`
	// ChecksumOffload makes the port offer IPv4, TCP and UDP checksum
	// offload, as Linux's loopback does (an in-memory link cannot corrupt
	// a frame): a checksum the sender leaves to the "NIC"
	// (RTE_MBUF_F_TX_*_CKSUM) is never computed, and the frame arrives at
	// the peer marked good (RTE_MBUF_F_RX_*_CKSUM_GOOD), its checksum
	// field holding only the pseudo-header sum. Frames checksummed in
	// software arrive unmarked and are verified by the receiver. Off by
	// default: net_ring offers no offloads.
	ChecksumOffload bool `yaml:"checksum_offload"`
	// RxCopyBreak, when above 0, is the largest frame (bytes) that
	// arrives at this port copied into a small mbuf of its receive
	// queue's own pool, the sender's mbuf going back to its pool at
	// once: Linux drivers' rx_copybreak (e1000e's copybreak, ethtool
	// --set-tunable rx-copybreak). Frames stay in the rings until the
	// receiving lcore drains them, and a burst of ten thousand small
	// requests would otherwise hold ten thousand full data rooms, each
	// touching its own page; small mbufs pack a page with many frames.
	// The copy pool has one mbuf per descriptor of the queue's ring;
	// when it is empty frames pass by pointer as without copybreak
	// (counted: rx_copybreak_fallbacks). 0 (the default) copies
	// nothing, as net_ring.
	RxCopyBreak int `yaml:"rx_copybreak"`
}

// MaxCopyBreak is the largest RxCopyBreak.
const MaxCopyBreak = 2048

// Validate names the first bad key.
func (c Config) Validate() error {
	if c.MAC != "" {
		if _, err := net.ParseMAC(c.MAC); err != nil {
			return fmt.Errorf("mac: %w", err)
		}
	}
	if c.MTU != 0 && (c.MTU < 68 || c.MTU > 9600) {
		return fmt.Errorf("mtu: %d is outside 68..9600", c.MTU)
	}
	if c.RxCopyBreak < 0 || c.RxCopyBreak > MaxCopyBreak {
		return fmt.Errorf("rx_copybreak: %d is outside 0..%d", c.RxCopyBreak, MaxCopyBreak)
	}
	if c.SpeedMbps < 0 {
		return fmt.Errorf("speed_mbps: %d is negative", c.SpeedMbps)
	}
	return nil
}

func (c Config) withDefaults(idx int) Config {
	if c.Name == "" {
		c.Name = fmt.Sprintf("ring%d", idx)
	}
	if c.MAC == "" {
		c.MAC = fmt.Sprintf("02:52:44:00:00:%02x", idx+1)
	}
	if c.MTU == 0 {
		c.MTU = 1500
	}
	if c.SpeedMbps == 0 {
		c.SpeedMbps = 10000
	}
	return c
}
