package ipv6

import (
	"fmt"
	"time"
)

// ReasmConfig bounds reassembly. A zero field takes its default.
type ReasmConfig struct {
	// Timeout is how long a datagram may take to complete from its first
	// arriving fragment (default 60 s: RFC 8200 section 4.5, and Linux's
	// net.ipv6.ip6frag_time).
	Timeout time.Duration `yaml:"timeout"`
	// MaxDatagrams bounds datagrams under reassembly at once, discarded
	// ones (RFC 5722) included until their timeout (default 64).
	MaxDatagrams int `yaml:"max_datagrams"`
	// MaxFragments bounds the fragments of one datagram (default 64: a
	// 64 KiB packet over the 1280-byte minimum MTU needs 54).
	MaxFragments int `yaml:"max_fragments"`
	// MaxBytes bounds fragment data buffered over all datagrams (default
	// 4 MiB, Linux's net.ipv6.ip6frag_high_thresh).
	MaxBytes int `yaml:"max_bytes"`
}

// DefaultReasmConfig returns the defaults.
func DefaultReasmConfig() ReasmConfig {
	return ReasmConfig{Timeout: 60 * time.Second, MaxDatagrams: 64, MaxFragments: 64, MaxBytes: 4 << 20}
}

// WithDefaults returns c with zero fields set to their defaults.
func (c ReasmConfig) WithDefaults() ReasmConfig {
	d := DefaultReasmConfig()
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	if c.MaxDatagrams == 0 {
		c.MaxDatagrams = d.MaxDatagrams
	}
	if c.MaxFragments == 0 {
		c.MaxFragments = d.MaxFragments
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = d.MaxBytes
	}
	return c
}

// Validate reports the first invalid field by key.
func (c ReasmConfig) Validate() error {
	switch {
	case c.Timeout < 0:
		return fmt.Errorf("timeout: %v is negative", c.Timeout)
	case c.MaxDatagrams < 0 || c.MaxDatagrams > 4096:
		return fmt.Errorf("max_datagrams: %d is outside 1..4096", c.MaxDatagrams)
	case c.MaxFragments < 0 || c.MaxFragments > 8192:
		return fmt.Errorf("max_fragments: %d is outside 1..8192", c.MaxFragments)
	case c.MaxBytes < 0 || c.MaxBytes > 1<<30:
		return fmt.Errorf("max_bytes: %d is outside 1..%d", c.MaxBytes, 1<<30)
	}
	return nil
}
