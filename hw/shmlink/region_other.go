//go:build !linux

package shmlink

import (
	"errors"
	"sync/atomic"
	"time"
)

// region is Linux-only: the liveness locks are F_OFD_SETLK and the
// doorbell a futex.
type region struct {
	mem  []byte
	lay  layout
	side int
}

func openRegion(Config) (*region, error) {
	return nil, errors.New("shmlink: needs Linux (futex doorbells, open file description locks)")
}

func wakeWord(*atomic.Uint32)                        {}
func waitWord(*atomic.Uint32, uint32, time.Duration) { time.Sleep(time.Millisecond) }
func (r *region) peerAlive() bool                    { return false }
func (r *region) close()                             {}
