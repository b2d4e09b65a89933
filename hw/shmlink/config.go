package shmlink

import (
	"fmt"
	"net"
	"time"
)

// Role says which side of the link a process is.
type Role string

// The two roles: the creator makes (and at Close removes) the file, the
// attacher maps the creator's.
const (
	RoleCreate Role = "create"
	RoleAttach Role = "attach"
)

// Limits of a link.
const (
	// MinSlots and MaxSlots bound the descriptors (and frame slots) of
	// one direction.
	MinSlots = 64
	MaxSlots = 1 << 15
	// DefaultSlots is each direction's ring when Config.Slots is 0, as
	// net_memif's default (1 << 10 descriptors).
	DefaultSlots = 1024
	// MaxMTU is the largest IP MTU (a jumbo frame's 9000 and some).
	MaxMTU = 9600
)

// Config configures one side of a link.
type Config struct {
	// Path is the shared file, e.g. /dev/shm/savanna-link.
	Path string `yaml:"path"`
	// Role is RoleCreate or RoleAttach.
	Role Role `yaml:"role"`
	// MTU is the largest IP datagram (default 1500). The attacher's
	// must equal the creator's, unless 0 (take the creator's).
	MTU int `yaml:"mtu"`
	// Slots is each direction's descriptors, a power of two in
	// MinSlots..MaxSlots (default DefaultSlots). The attacher's must
	// equal the creator's, unless 0.
	Slots int `yaml:"slots"`
	// MAC is this side's Ethernet address; empty gives
	// 02:53:4d:00:00:01 to the creator and 02:53:4d:00:00:02 to the
	// attacher.
	MAC string `yaml:"mac"`
	// Wait is how long an attacher waits for the creator's region to
	// appear (0: fail at once when it is not there).
	Wait time.Duration `yaml:"wait"`
}

// Validate names the first bad key.
func (c Config) Validate() error {
	switch {
	case c.Path == "":
		return fmt.Errorf("path: empty (want a file such as /dev/shm/savanna-link)")
	case c.Role != RoleCreate && c.Role != RoleAttach:
		return fmt.Errorf("role: %q: want %s or %s", c.Role, RoleCreate, RoleAttach)
	case c.MTU != 0 && (c.MTU < 68 || c.MTU > MaxMTU):
		return fmt.Errorf("mtu: %d is outside 68..%d", c.MTU, MaxMTU)
	case c.Slots != 0 && (c.Slots < MinSlots || c.Slots > MaxSlots || c.Slots&(c.Slots-1) != 0):
		return fmt.Errorf("slots: %d is not a power of two in %d..%d", c.Slots, MinSlots, MaxSlots)
	case c.Wait < 0:
		return fmt.Errorf("wait: %v is negative", c.Wait)
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
	return nil
}

// side is the index of the role's running flag and lock byte, and of
// the direction it transmits on: 0 for the creator, 1 for the attacher.
func (c Config) side() int {
	if c.Role == RoleAttach {
		return 1
	}
	return 0
}

func (c Config) withDefaults() Config {
	if c.MAC == "" {
		c.MAC = fmt.Sprintf("02:53:4d:00:00:%02x", c.side()+1)
	}
	return c
}
