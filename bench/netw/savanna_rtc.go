package netw

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/savanna-sim/savanna/stack/tcp"
)

// ErrRunToCompletion is what the savanna-rtc network's Listen and Dial
// return: its applications run on the lcores (stack/rtc) and have no
// net.Conn, so a workload written for net.Conn does not run on it.
var ErrRunToCompletion = errors.New("savanna-rtc: applications run to completion on the lcores (stack/rtc), not through net.Conn: use the run-to-completion workloads (work.For)")

// SavannaRTC is the savanna network (the same two stacks, link and
// sizing, made by the same constructor) with its applications run to
// completion on the lcores through stack/rtc: an application's handlers
// are called on the lcore that polls its connection and use tcp.Conn
// there, with no socket rings and no goroutine hand-off. Its lcores
// spin and park as savanna's do (SavannaSizing.Spin), and the process's
// CPU time counts their spinning. (Lcores that never park, as a DPDK
// application's, were tried and left out: on the bench's shared 2-core
// machine two threads that never sleep lose their CPUs to other
// programs for whole time slices, and ping-pong ran at 60–70k round
// trips a second against 160k parking, bulk at half the MB per
// CPU-second; bench/PROFILE.md, "Run to completion (savanna-rtc)".)
type SavannaRTC struct {
	*Savanna
}

// NewSavannaRTC makes and starts the pair at mtu speaking family (4 or
// 6) with NewSavanna.
func NewSavannaRTC(mtu, family int) (*SavannaRTC, error) {
	s, err := NewSavanna(mtu, family)
	if err != nil {
		return nil, fmt.Errorf("savanna-rtc: %w", err)
	}
	return &SavannaRTC{Savanna: s}, nil
}

// Name implements Network.
func (s *SavannaRTC) Name() string { return "savanna-rtc" }

// Listen implements Network: it refuses (ErrRunToCompletion).
func (s *SavannaRTC) Listen(uint16) (net.Listener, error) { return nil, ErrRunToCompletion }

// Dial implements Network: it refuses (ErrRunToCompletion).
func (s *SavannaRTC) Dial(context.Context, uint16) (net.Conn, error) {
	return nil, ErrRunToCompletion
}

// ServerAddr returns the server side's address at port, for rtc.Dial
// from the client side.
func (s *SavannaRTC) ServerAddr(port uint16) tcp.Addr {
	ip, _ := netip.AddrFromSlice(s.addrs.serverIP)
	a, _ := tcp.AddrFromNetip(netip.AddrPortFrom(ip.Unmap(), port))
	return a
}
