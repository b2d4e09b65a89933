//go:build !dpdk

package dpdk

import (
	"errors"

	"github.com/savanna-sim/savanna/hw"
)

// ErrNotBuilt is returned by everything in a build without the dpdk tag.
var ErrNotBuilt = errors.New("savanna was built without -tags dpdk; rebuild with go build -tags dpdk (needs libdpdk-dev)")

// Available reports whether this build has the DPDK backend.
func Available() bool { return false }

// EAL is the initialised DPDK environment; this build never makes one.
type EAL struct{}

// Init fails: this build has no DPDK backend.
func Init(Config) (*EAL, error) { return nil, ErrNotBuilt }

// Ports fails: this build has no DPDK backend.
func (*EAL) Ports() []string { return nil }

// Port fails: this build has no DPDK backend.
func (*EAL) Port(string) (hw.EthDev, error) { return nil, ErrNotBuilt }

// Mempool fails: this build has no DPDK backend.
func (*EAL) Mempool(MempoolConfig) (hw.Mempool, error) { return nil, ErrNotBuilt }

// CompressDev fails: this build has no DPDK backend.
func (*EAL) CompressDev(string, CompressConfig) (hw.CompressDev, error) {
	return nil, ErrNotBuilt
}

// RegisterThread fails: this build has no DPDK backend.
func (*EAL) RegisterThread() (int, error) { return -1, ErrNotBuilt }

// ThreadHook fails: this build has no DPDK backend.
func (*EAL) ThreadHook(int) (func(), error) { return nil, ErrNotBuilt }

// PortWithPool fails: this build has no DPDK backend.
func (*EAL) PortWithPool(string, MempoolConfig) (hw.EthDev, hw.Mempool, error) {
	return nil, nil, ErrNotBuilt
}

// PortName returns "": this build opens no DPDK ports.
func PortName(hw.EthDev) string { return "" }

// UnregisterThread does nothing in this build.
func (*EAL) UnregisterThread() {}

// Close does nothing in this build.
func (*EAL) Close() error { return nil }

// OpenCompressService fails: this build has no DPDK backend.
func (*EAL) OpenCompressService(string, CompressConfig) (hw.CompressService, error) {
	return nil, ErrNotBuilt
}
