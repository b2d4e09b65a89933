//go:build dpdk

package dpdk

import (
	"fmt"

	"github.com/savanna-sim/savanna/hw"
)

// PortWithPool opens the port called name, or the only port the EAL
// probed when name is empty, and makes its rx pool on the port's NUMA
// socket (cfg.Socket is overridden), as a program wiring a stack onto
// the port wants them: the pair as hw contracts, so that the wiring
// compiles the same in the build without the tag.
func (e *EAL) PortWithPool(name string, cfg MempoolConfig) (hw.EthDev, hw.Mempool, error) {
	if name == "" {
		ports := e.Ports()
		if len(ports) != 1 {
			return nil, nil, fmt.Errorf("dpdk: the EAL probed %d ports %q: name the one to use", len(ports), ports)
		}
		name = ports[0]
	}
	p, err := e.OpenPort(name)
	if err != nil {
		return nil, nil, err
	}
	cfg.Socket = p.Socket()
	mp, err := e.NewMempool(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("dpdk: port %s: %w", name, err)
	}
	return p, mp, nil
}

// PortName returns the DPDK device name of a port opened here, or ""
// for a port of another backend.
func PortName(dev hw.EthDev) string {
	if p, ok := dev.(*EthDev); ok {
		return p.Name()
	}
	return ""
}
