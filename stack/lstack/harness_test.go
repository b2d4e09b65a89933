package lstack_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// node is one simulated host: a port, a core and a stack instance.
type node struct {
	port *nic.Port
	core *sim.Core
	in   *lstack.Instance
}

// pair is two hosts joined by a link.
type pair struct {
	eng        *sim.Engine
	link       *nic.Link
	client     *node
	server     *node
	clientAddr [4]byte
	serverAddr [4]byte
	// v6: the pair speaks IPv6 between client6 and server6, from start
	// (once Duplicate Address Detection is over).
	v6               bool
	client6, server6 [16]byte
	start            time.Duration
}

func (p *pair) addrs(port uint16) (local, remote tcp.Addr) {
	if p.v6 {
		return tcp.Addr{IP: tcp.IPFrom16(p.client6)}, tcp.Addr{IP: tcp.IPFrom16(p.server6), Port: port}
	}
	return tcp.AddrFrom4(p.clientAddr, 0), tcp.AddrFrom4(p.serverAddr, port)
}

// newNode builds a user-space host whose port and pool take frames of
// mtu: 16384 mbufs and 4096-descriptor rings, so that a transfer's
// windows never run a pool dry, with every checksum offloaded.
func newNode(eng *sim.Engine, id uint16, name, addr string, tcpCfg tcp.Config, mtu int) *node {
	h, err := simhost.NewHost(eng, simhost.HostConfig{
		NIC: simhost.NICConfig{Name: name, ID: id, MTU: mtu,
			TxOffloads: hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum | hw.TxOffloadUDPChecksum,
			RxOffloads: hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum | hw.RxOffloadUDPChecksum,
			RxRing:     4096, TxRing: 4096, Mbufs: 16384,
			// A jumbo frame after the headroom, with room to spare.
			MbufSize: max(nic.DefaultMbufSize, mtu+14+hw.DefaultHeadroom+64)},
		Address: addr, TCP: tcpCfg, CPU: int(id),
	})
	Expect(err).NotTo(HaveOccurred())
	return &node{port: h.Port, core: h.Core, in: h.Instance}
}

func newPair(seed uint64, link nic.LinkConfig, tcpCfg tcp.Config, mtu int) *pair {
	eng := sim.NewEngine(seed)
	c := newNode(eng, 0, "client", "10.0.0.2/24", tcpCfg, mtu)
	s := newNode(eng, 1, "server", "10.0.0.1/24", tcpCfg, mtu)
	l, err := nic.NewLink(eng, "wire", c.port, s.port, link)
	Expect(err).NotTo(HaveOccurred())
	return &pair{eng: eng, link: l, client: c, server: s, clientAddr: [4]byte{10, 0, 0, 2}, serverAddr: [4]byte{10, 0, 0, 1}}
}

// stream is a deterministic byte stream: a counter's big-endian bytes.
type stream struct{ off uint64 }

func (s *stream) fill(b []byte) {
	var w [8]byte
	for i := range b {
		pos := s.off + uint64(i)
		binary.BigEndian.PutUint64(w[:], pos/8)
		b[i] = w[pos%8] ^ byte(pos*131)
	}
	s.off += uint64(len(b))
}

// sender connects and writes total bytes, then half-closes.
type sender struct {
	p       *pair
	conn    *tcp.Conn
	total   int
	written int
	pending []byte
	buf     []byte
	src     stream
	sum     hash.Hash
	closed  bool
	err     error
}

func (s *sender) Poll(m hw.Meter) (bool, time.Duration) {
	if s.conn == nil {
		if m.Now() < s.p.start {
			return false, s.p.start
		}
		local, remote := s.p.addrs(5001)
		c, err := s.p.client.in.TCP().Connect(m.Now(), local, remote)
		if err != nil {
			s.err = err
			return false, sim.Never
		}
		s.conn = c
		return true, sim.Never
	}
	if s.closed || !s.conn.Connected() {
		return false, sim.Never
	}
	worked := false
	for s.written < s.total {
		if len(s.pending) == 0 {
			n := min(len(s.buf), s.total-s.written)
			s.src.fill(s.buf[:n])
			s.pending = s.buf[:n]
		}
		n, err := s.conn.Write(s.pending)
		if err != nil {
			s.err = err
			return false, sim.Never
		}
		if n == 0 {
			break
		}
		s.sum.Write(s.pending[:n])
		s.pending = s.pending[n:]
		s.written += n
		worked = true
	}
	if s.written == s.total && !s.closed {
		s.closed = true
		Expect(s.conn.CloseWrite()).To(Succeed())
		worked = true
	}
	return worked, sim.Never
}

// receiver accepts one connection and reads it to EOF.
type receiver struct {
	ln   *tcp.Listener
	conn *tcp.Conn
	buf  []byte
	got  int
	sum  hash.Hash
	eof  bool
	err  error
	at   time.Duration
}

func (r *receiver) Poll(m hw.Meter) (bool, time.Duration) {
	if r.conn == nil {
		c, ok := r.ln.Accept()
		if !ok {
			return false, sim.Never
		}
		r.conn = c
	}
	worked := false
	for !r.eof {
		n, err := r.conn.Read(r.buf)
		if n > 0 {
			r.sum.Write(r.buf[:n])
			r.got += n
			worked = true
		}
		if err == io.EOF {
			r.eof, r.at = true, m.Now()
			_ = r.conn.Close()
			break
		}
		if err != nil {
			r.err = err
			break
		}
		if n == 0 {
			break
		}
	}
	return worked, sim.Never
}

// transfer sends total bytes from client to server and runs until the
// receiver saw EOF or limit of simulated time passed.
func transfer(p *pair, total int, limit time.Duration) (*sender, *receiver) {
	_, remote := p.addrs(5001)
	ln, err := p.server.in.TCP().Listen(remote.IP, 5001, 16)
	Expect(err).NotTo(HaveOccurred())
	s := &sender{p: p, total: total, buf: make([]byte, 64<<10), sum: sha256.New()}
	r := &receiver{ln: ln, buf: make([]byte, 64<<10), sum: sha256.New()}
	p.client.core.Attach(s)
	p.server.core.Attach(r)
	step := time.Millisecond
	for t := step; t <= limit && !r.eof; t += step {
		p.eng.RunUntil(t)
	}
	return s, r
}

func describe(s *sender, r *receiver) string {
	return fmt.Sprintf("sent %d of %d (err %v), received %d (err %v, eof %v)", s.written, s.total, s.err, r.got, r.err, r.eof)
}
