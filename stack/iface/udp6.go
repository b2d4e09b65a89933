package iface

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/udp"
)

// UDPAddr6 is an IPv6 address and port.
type UDPAddr6 struct {
	IP   ipv6.Addr
	Port uint16
}

// String formats a as "[addr]:port" (RFC 5952 section 6).
func (a UDPAddr6) String() string { return netip.AddrPortFrom(a.IP.Netip(), a.Port).String() }

// SendTo6 sends payload to an IPv6 destination: in one mbuf when it
// fits the path MTU, fragmented at the source otherwise.
func (s *UDPSocket) SendTo6(now time.Duration, payload []byte, to UDPAddr6) error {
	if s.closed {
		return ErrClosed
	}
	if err := s.ifc.sendUDP6(now, s.port, to, payload); err != nil {
		s.stats.SendErrors++
		s.ifc.stats.UDP.SndbufErrors++
		return fmt.Errorf("udp send to %s: %w", to, err)
	}
	s.stats.Sent++
	return nil
}

func (i *Interface) sendUDP6(now time.Duration, sport uint16, to UDPAddr6, payload []byte) error {
	if i.v6 == nil {
		return ErrBadAddress
	}
	i.charge(CostUDPTx, 1)
	n := udp.HeaderLen + len(payload)
	if n > ipv6.MaxPayloadLen || n > len(i.scratch) {
		return ErrMessageTooLong
	}
	if ipv6.HeaderLen+n <= i.PathMTU6(now, to.IP) {
		if m := i.AllocTransport6(); m != nil {
			if b, err := m.Append(n); err == nil {
				putUDPHeader(b, sport, to.Port)
				copy(b[udp.HeaderLen:], payload)
				i.charge(hw.CostCopyByte, int64(len(payload)))
				if err := i.OutputIPv6(now, m, to.IP, ipv6.NextUDP, OutputOptions6{Checksum: ChecksumUDP}); err != nil {
					return err
				}
				i.stats.UDP.OutDatagrams++
				return nil
			}
			m.Free()
		} else {
			return ErrNoMbuf
		}
	}
	b := i.scratch[:n]
	putUDPHeader(b, sport, to.Port)
	copy(b[udp.HeaderLen:], payload)
	if err := i.SendIPv6(now, to.IP, ipv6.NextUDP, b, OutputOptions6{Checksum: ChecksumUDP}); err != nil {
		return err
	}
	i.stats.UDP.OutDatagrams++
	return nil
}

// putUDPHeader writes ports and length with a zero checksum, which the
// output fills (RFC 768; mandatory over IPv6, RFC 8200 section 8.1).
func putUDPHeader(b []byte, sport, dport uint16) {
	binary.BigEndian.PutUint16(b, sport)
	binary.BigEndian.PutUint16(b[2:], dport)
	binary.BigEndian.PutUint16(b[4:], uint16(len(b)))
	binary.BigEndian.PutUint16(b[6:], 0)
}

// Peek6 returns the oldest datagram and, when it came over IPv6, its
// sender (v6 true); an IPv4 datagram's sender is Peek's.
func (s *UDPSocket) Peek6() (data []byte, from UDPAddr6, v6, ok bool) {
	if s.n == 0 {
		return nil, UDPAddr6{}, false, false
	}
	e := &s.queue[s.head]
	return e.data, e.from6, e.v6, true
}

// RecvFrom6 copies the oldest datagram into buf, as RecvFrom, and
// returns its IPv6 sender (v6 false for one that came over IPv4).
func (s *UDPSocket) RecvFrom6(buf []byte) (n int, from UDPAddr6, v6, ok bool) {
	data, from, v6, ok := s.Peek6()
	if !ok {
		return 0, UDPAddr6{}, false, false
	}
	n = copy(buf, data)
	if n < len(data) {
		s.stats.Truncated++
	}
	s.Discard()
	return n, from, v6, true
}
