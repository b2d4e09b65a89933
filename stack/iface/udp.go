package iface

import (
	"fmt"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/udp"
)

// UDPAddr is an IPv4 address and port.
type UDPAddr struct {
	IP   [4]byte
	Port uint16
}

// String formats a as "a.b.c.d:port".
func (a UDPAddr) String() string { return fmt.Sprintf("%s:%d", ipv4.AddrString(a.IP), a.Port) }

// UDPSocketStats are one socket's counters.
type UDPSocketStats struct {
	Received   uint64 `json:"received"`    // datagrams queued
	Delivered  uint64 `json:"delivered"`   // datagrams read by the application
	Dropped    uint64 `json:"dropped"`     // queue full
	Truncated  uint64 `json:"truncated"`   // read into a buffer too small
	Sent       uint64 `json:"sent"`        // datagrams sent
	SendErrors uint64 `json:"send_errors"` // sends that failed
	ICMPErrors uint64 `json:"icmp_errors"` // ICMP errors quoting our datagrams
}

// udpEntry is one queued datagram: a view into the mbuf that carried it
// (zero-copy), or into a private copy for a reassembled datagram.
type udpEntry struct {
	m    *hw.Mbuf
	data []byte
	from UDPAddr
	// from6 is the sender of a datagram that came over IPv6 (v6).
	from6 UDPAddr6
	v6    bool
}

// UDPSocket is a UDP endpoint bound to a local port of the interface
// (any destination address of ours, including broadcasts). Its receive
// queue is bounded; datagrams beyond it are dropped and counted.
type UDPSocket struct {
	ifc    *Interface
	port   uint16
	queue  []udpEntry // ring of fixed capacity
	head   int
	n      int
	closed bool
	stats  UDPSocketStats
}

// ListenUDP binds a socket to port, or to a free ephemeral port if port
// is 0.
func (i *Interface) ListenUDP(port uint16) (*UDPSocket, error) {
	if port == 0 {
		p, err := i.pickEphemeral()
		if err != nil {
			return nil, err
		}
		port = p
	} else if i.udp[port] != nil {
		return nil, fmt.Errorf("listen udp port %d: %w", port, ErrPortInUse)
	}
	s := &UDPSocket{ifc: i, port: port, queue: make([]udpEntry, i.cfg.UDPRecvQueue)}
	i.udp[port] = s
	return s, nil
}

func (i *Interface) pickEphemeral() (uint16, error) {
	lo, hi := i.cfg.EphemeralLow, i.cfg.EphemeralHigh
	for range hi - lo + 1 {
		p := i.ephemeral
		i.ephemeral++
		if i.ephemeral > hi {
			i.ephemeral = lo
		}
		if i.udp[uint16(p)] == nil {
			return uint16(p), nil
		}
	}
	return 0, fmt.Errorf("listen udp: %w", ErrNoPorts)
}

// LocalAddr returns the bound address.
func (s *UDPSocket) LocalAddr() UDPAddr { return UDPAddr{IP: s.ifc.ip, Port: s.port} }

// Stats returns the socket's counters.
func (s *UDPSocket) Stats() UDPSocketStats { return s.stats }

// Pending returns the number of datagrams waiting to be read.
func (s *UDPSocket) Pending() int { return s.n }

// SendTo sends payload to to. The datagram is built in one mbuf when it
// fits the MTU (its checksum left to the NIC when the link offloads it),
// and fragmented otherwise.
func (s *UDPSocket) SendTo(now time.Duration, payload []byte, to UDPAddr) error {
	if s.closed {
		return ErrClosed
	}
	err := s.ifc.sendUDP(now, s.port, to, payload)
	if err != nil {
		s.stats.SendErrors++
		s.ifc.stats.UDP.SndbufErrors++
		return fmt.Errorf("udp send to %s: %w", to, err)
	}
	s.stats.Sent++
	return nil
}

func (i *Interface) sendUDP(now time.Duration, sport uint16, to UDPAddr, payload []byte) error {
	i.charge(CostUDPTx, 1)
	n := udp.HeaderLen + len(payload)
	if ipv4.MinHeaderLen+n > ipv4.MaxDatagramLen {
		return ErrMessageTooLong
	}
	r := udp.Repr{SrcPort: sport, DstPort: to.Port, PayloadLen: len(payload)}
	if ipv4.MinHeaderLen+n <= i.mtu {
		m := i.AllocTransport()
		if m == nil {
			return ErrNoMbuf
		}
		b, err := m.Append(n)
		if err != nil {
			// Fits the MTU but not one mbuf (jumbo MTU): build it in
			// the scratch buffer and fragment.
			m.Free()
			return i.sendUDPBytes(now, r, to, payload)
		}
		copy(b[udp.HeaderLen:], payload)
		i.charge(hw.CostCopyByte, int64(len(payload)))
		// The header with a zero checksum; OutputIPv4 fills it in
		// software or through the NIC.
		r.Emit(udp.Packet(b), i.ip, to.IP, false)
		udp.Packet(b).SetChecksum(0)
		if err := i.OutputIPv4(now, m, to.IP, ipv4.ProtoUDP, OutputOptions{Checksum: ChecksumUDP}); err != nil {
			return err
		}
		i.stats.UDP.OutDatagrams++
		return nil
	}
	return i.sendUDPBytes(now, r, to, payload)
}

// sendUDPBytes builds a datagram in the scratch buffer, checksums it in
// software and sends it fragmented.
func (i *Interface) sendUDPBytes(now time.Duration, r udp.Repr, to UDPAddr, payload []byte) error {
	n := r.BufferLen()
	b := i.scratch[:n]
	copy(b[udp.HeaderLen:], payload)
	r.Emit(udp.Packet(b), i.ip, to.IP, true)
	i.charge(hw.CostChecksumByte, int64(n))
	if err := i.sendBytes(now, b, to.IP, ipv4.ProtoUDP, OutputOptions{}); err != nil {
		return err
	}
	i.stats.UDP.OutDatagrams++
	return nil
}

// RecvFrom copies the oldest datagram into buf and returns its length
// (truncated to len(buf), counted) and sender; ok is false when the
// queue is empty.
func (s *UDPSocket) RecvFrom(buf []byte) (n int, from UDPAddr, ok bool) {
	data, from, ok := s.Peek()
	if !ok {
		return 0, UDPAddr{}, false
	}
	n = copy(buf, data)
	if n < len(data) {
		s.stats.Truncated++
	}
	s.Discard()
	return n, from, true
}

// Peek returns the oldest datagram without copying it; the bytes stay
// valid until Discard or Close.
func (s *UDPSocket) Peek() (data []byte, from UDPAddr, ok bool) {
	if s.n == 0 {
		return nil, UDPAddr{}, false
	}
	e := &s.queue[s.head]
	return e.data, e.from, true
}

// Discard drops the oldest datagram (after Peek), freeing its mbuf.
func (s *UDPSocket) Discard() {
	if s.n == 0 {
		return
	}
	e := &s.queue[s.head]
	freeMbuf(e.m)
	*e = udpEntry{}
	s.head = (s.head + 1) % len(s.queue)
	s.n--
	s.stats.Delivered++
}

// Close unbinds the socket and frees what is queued.
func (s *UDPSocket) Close() {
	if s.closed {
		return
	}
	s.closed = true
	s.drain()
	if s.ifc.udp[s.port] == s {
		delete(s.ifc.udp, s.port)
	}
}

func (s *UDPSocket) drain() {
	for s.n > 0 {
		e := &s.queue[s.head]
		freeMbuf(e.m)
		*e = udpEntry{}
		s.head = (s.head + 1) % len(s.queue)
		s.n--
	}
}

// udpInput validates a datagram and queues it on its socket, or answers
// port unreachable (RFC 1122 section 4.1.3.1).
func (i *Interface) udpInput(now time.Duration, p ipv4.Packet, r ipv4.Repr, b []byte, meta rxMeta) {
	st := &i.stats.UDP
	i.charge(CostUDPRx, 1)
	verify := true
	if m := meta.m; m != nil {
		if m.Flags&hw.RxL4ChecksumBad != 0 {
			st.InErrors++
			st.InCsumErrors++
			m.Free()
			return
		}
		if m.Flags&hw.RxL4ChecksumGood != 0 {
			verify = false
			st.InCsumOffload++
		}
	}
	u, err := udp.Parse(udp.Packet(b), r.Src, r.Dst, verify)
	if err != nil {
		st.InErrors++
		switch err {
		case udp.ErrChecksum:
			st.InCsumErrors++
		case udp.ErrLength:
			st.InBadLength++
		default:
			st.InTruncated++
		}
		freeMbuf(meta.m)
		return
	}
	if verify && u.Checksummed {
		i.charge(hw.CostChecksumByte, int64(len(b)))
	}
	s := i.udp[u.DstPort]
	if s == nil {
		if meta.ipBroadcast || meta.linkBroadcast {
			st.IgnoredMulti++
		} else {
			st.NoPorts++
			i.sendError(now, p, meta.linkBroadcast, uint8(icmp.TypeDestUnreach), icmp.CodePortUnreach, 0)
		}
		freeMbuf(meta.m)
		return
	}
	if s.n == len(s.queue) {
		st.InErrors++
		st.RcvbufErrors++
		s.stats.Dropped++
		freeMbuf(meta.m)
		return
	}
	data := b[udp.HeaderLen : udp.HeaderLen+u.PayloadLen]
	if meta.m == nil {
		// Reassembled: the bytes live in the reassembler, so copy them
		// (the one allocation on a receive path, for a rare case).
		data = append([]byte(nil), data...)
		st.InCopied++
	}
	s.queue[(s.head+s.n)%len(s.queue)] = udpEntry{m: meta.m, data: data, from: UDPAddr{IP: r.Src, Port: u.SrcPort}}
	s.n++
	s.stats.Received++
	st.InDatagrams++
}
