package tap

import (
	"errors"
	"fmt"
	"net"
)

// MaxQueues is the most queues a TAP port opens here.
const MaxQueues = 16

// Config configures a TAP port.
type Config struct {
	// Name is the interface name (at most 15 bytes); it is created if
	// it does not exist.
	Name string `yaml:"name"`
	// MAC is the port's (the stack's) Ethernet address; empty uses
	// 02:53:56:00:00:02. It must differ from the kernel side's.
	MAC string `yaml:"mac"`
	// MTU is the largest IP datagram (default 1500).
	MTU int `yaml:"mtu"`
	// Up brings the kernel side of the interface up when the port
	// starts.
	Up bool `yaml:"up"`
	// RxLoss drops this fraction of received frames and RxReorder
	// delivers this fraction one frame late: impairments for kernels
	// without sch_netem, applied to what the kernel sent (the direction
	// netem on the TAP's egress would impair). Both default to 0.
	RxLoss    float64 `yaml:"rx_loss"`
	RxReorder float64 `yaml:"rx_reorder"`
	// Seed seeds the impairments.
	Seed uint64 `yaml:"seed"`
}

// Validate names the first bad key.
func (c Config) Validate() error {
	if c.Name == "" || len(c.Name) > 15 {
		return fmt.Errorf("name: %q must have 1..15 bytes", c.Name)
	}
	if c.MAC != "" {
		m, err := net.ParseMAC(c.MAC)
		if err != nil || len(m) != 6 {
			return fmt.Errorf("mac: %q is not an Ethernet address", c.MAC)
		}
		if m[0]&1 != 0 {
			return fmt.Errorf("mac: %s is not a unicast address", c.MAC)
		}
	}
	if c.RxLoss < 0 || c.RxLoss >= 1 {
		return fmt.Errorf("rx_loss: %v is outside [0, 1)", c.RxLoss)
	}
	if c.RxReorder < 0 || c.RxReorder >= 1 {
		return fmt.Errorf("rx_reorder: %v is outside [0, 1)", c.RxReorder)
	}
	if c.MTU != 0 && (c.MTU < 68 || c.MTU > 65000) {
		return fmt.Errorf("mtu: %d is outside 68..65000", c.MTU)
	}
	return nil
}

// ErrNoRSS is returned by the RSS calls a TAP cannot do.
var ErrNoRSS = errors.New("tap: the kernel steers flows over TAP queues; there is no redirection table")
