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
}

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
