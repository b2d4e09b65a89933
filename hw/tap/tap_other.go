//go:build !linux

package tap

import (
	"errors"

	"github.com/savanna-sim/savanna/hw"
)

// Dev is a TAP port; TAP devices exist on Linux only.
type Dev struct{ hw.EthDev }

// Open fails: TAP devices exist on Linux only.
func Open(cfg Config) (*Dev, error) { return nil, errors.New("tap: TAP devices need Linux") }

// SetRxNotify fails off Linux.
func (d *Dev) SetRxNotify(int, func()) error { return errors.New("tap: TAP devices need Linux") }

// Close does nothing off Linux.
func (d *Dev) Close() error { return nil }

// Name returns "".
func (d *Dev) Name() string { return "" }
