package nic

import (
	"fmt"
	"time"

	"github.com/savanna-sim/savanna/sim"
)

// Switch is a store-and-forward learning Ethernet switch (IEEE 802.1D
// transparent bridging without spanning tree): it learns the port each
// source MAC arrives on, forwards frames to a known destination's port,
// floods broadcast, multicast and unknown destinations to every other
// port, and filters frames whose destination is on the port they came
// in by. Each switch port is connected to one link.
type Switch struct {
	name  string
	eng   *sim.Engine
	cfg   SwitchConfig
	ports []*SwitchPort
	table map[[6]byte]int
	stats SwitchStats
}

// SwitchStats count a switch's work and drops.
type SwitchStats struct {
	Received  uint64 `json:"received"`
	Forwarded uint64 `json:"forwarded"`
	// Flooded counts frames sent to all other ports (each copy is also
	// in Forwarded).
	Flooded uint64 `json:"flooded"`
	// Filtered counts frames whose destination is on their own port.
	Filtered uint64 `json:"filtered"`
	// DroppedCRC counts frames with a bad FCS (store-and-forward
	// switches check it).
	DroppedCRC uint64 `json:"dropped_crc"`
	// DroppedBufferFull counts copies dropped because the output
	// port's queue was over buffer_bytes.
	DroppedBufferFull uint64 `json:"dropped_buffer_full"`
	// DroppedLinkDown counts copies not sent because the output link
	// was down or unconnected.
	DroppedLinkDown uint64 `json:"dropped_link_down"`
	DroppedRunt     uint64 `json:"dropped_runt"`
	// Learned counts MAC table insertions and moves; TableFull the
	// addresses not learned because the table was full.
	Learned   uint64 `json:"learned"`
	Moves     uint64 `json:"moves"`
	TableFull uint64 `json:"table_full"`
}

// SwitchPort is one port of a Switch, the end of a link.
type SwitchPort struct {
	sw    *Switch
	index int
	wire  *linkDir
}

// NewSwitch creates a switch with cfg.Ports ports.
func NewSwitch(eng *sim.Engine, cfg SwitchConfig) (*Switch, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("switch %q: %w", cfg.Name, err)
	}
	if cfg.BufferBytes == 0 {
		cfg.BufferBytes = 512 << 10
	}
	if cfg.MACTableSize == 0 {
		cfg.MACTableSize = 8192
	}
	s := &Switch{name: cfg.Name, eng: eng, cfg: cfg, table: make(map[[6]byte]int)}
	for i := 0; i < cfg.Ports; i++ {
		s.ports = append(s.ports, &SwitchPort{sw: s, index: i})
	}
	return s, nil
}

// Port returns switch port i, or nil.
func (s *Switch) Port(i int) *SwitchPort {
	if i < 0 || i >= len(s.ports) {
		return nil
	}
	return s.ports[i]
}

// Stats returns the switch's counters.
func (s *Switch) Stats() SwitchStats { return s.stats }

// Lookup returns the port a MAC was learned on.
func (s *Switch) Lookup(mac [6]byte) (int, bool) {
	i, ok := s.table[mac]
	return i, ok
}

func (sp *SwitchPort) attach(d *linkDir) error {
	if sp.wire != nil {
		return fmt.Errorf("switch %q port %d is already connected to link %q", sp.sw.name, sp.index, sp.wire.link.name)
	}
	sp.wire = d
	return nil
}

func (sp *SwitchPort) speedMbps() int { return 0 }
func (sp *SwitchPort) active() bool   { return true }
func (sp *SwitchPort) endpointName() string {
	return fmt.Sprintf("switch %s port %d", sp.sw.name, sp.index)
}

// receive implements endpoint: learn, then forward or flood.
func (sp *SwitchPort) receive(data []byte, now time.Duration, badFCS bool) {
	s := sp.sw
	s.stats.Received++
	switch {
	case badFCS:
		s.stats.DroppedCRC++
		return
	case len(data) < ethHeaderLen:
		s.stats.DroppedRunt++
		return
	}
	var dst, src [6]byte
	copy(dst[:], data[0:6])
	copy(src[:], data[6:12])
	if src[0]&1 == 0 { // never learn a group address
		if at, ok := s.table[src]; !ok {
			if len(s.table) < s.cfg.MACTableSize {
				s.table[src] = sp.index
				s.stats.Learned++
			} else {
				s.stats.TableFull++
			}
		} else if at != sp.index {
			s.table[src] = sp.index
			s.stats.Moves++
		}
	}
	out := now + s.cfg.ForwardDelay
	if dst[0]&1 == 0 {
		if at, ok := s.table[dst]; ok {
			if at == sp.index {
				s.stats.Filtered++
				return
			}
			s.forward(s.ports[at], data, out)
			return
		}
	}
	s.stats.Flooded++
	for _, o := range s.ports {
		if o != sp {
			s.forward(o, data, out)
		}
	}
}

// forward queues a copy of data on port o's link at time at, unless the
// port's queue is over the buffer.
func (s *Switch) forward(o *SwitchPort, data []byte, at time.Duration) {
	if o.wire == nil || !o.wire.up() {
		s.stats.DroppedLinkDown++
		return
	}
	// Bytes still queued ahead of this frame at the output port.
	queued := o.wire.backlog(at).Seconds() * float64(o.wire.link.bps) / 8
	if queued+float64(WireBytes(len(data))) > float64(s.cfg.BufferBytes) {
		s.stats.DroppedBufferFull++
		return
	}
	s.stats.Forwarded++
	o.wire.send(data, at)
}
