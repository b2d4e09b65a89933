package nic

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// CaptureEpoch is the wall-clock instant simulated time zero is written
// as in captures. A fixed epoch (not the host's clock) keeps captures
// byte-identical for a given scenario and seed.
func CaptureEpoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// Capture writes the frames of one or more ports to a pcapng stream
// (gopacket's pcapgo.NgWriter), one interface per port, both directions:
// a received frame when it lands in an rx ring, a transmitted frame when
// its first bit goes on the wire (stamped with that time, which may be
// later than the frames written before it while the wire is busy).
// Timestamps are simulated nanoseconds from CaptureEpoch (if_tsresol 9).
//
// Write errors do not stop the simulation: the first is kept (Err) and
// every failed frame counted.
type Capture struct {
	w       *pcapgo.NgWriter
	snaplen int
	stats   CaptureStats
	err     error
}

// CaptureStats count what a capture wrote.
type CaptureStats struct {
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
	// WriteErrors counts frames lost to writer errors.
	WriteErrors uint64 `json:"write_errors"`
}

// captureTap is a port's hook into a capture.
type captureTap struct {
	c     *Capture
	iface int
}

func (t *captureTap) write(at time.Duration, frame []byte) { t.c.write(t.iface, at, frame) }

// NewCapture starts a pcapng stream on w capturing ports (at least one),
// truncating frames to snaplen bytes (0: whole frames). The section
// header names Savanna and no host details, so the bytes depend only on
// the simulation.
func NewCapture(w io.Writer, snaplen int, ports ...*Port) (*Capture, error) {
	if len(ports) == 0 {
		return nil, errors.New("capture: no ports")
	}
	if snaplen < 0 {
		return nil, fmt.Errorf("capture: snaplen %d is negative", snaplen)
	}
	c := &Capture{snaplen: snaplen}
	opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "savanna"}}
	for i, p := range ports {
		intf := pcapgo.NgInterface{
			Name:                p.name,
			Description:         fmt.Sprintf("savanna %s port %d (%s)", p.preset.Name, p.id, p.preset.Description),
			LinkType:            layers.LinkTypeEthernet,
			TimestampResolution: 9,
			SnapLength:          uint32(snaplen),
		}
		var err error
		if i == 0 {
			c.w, err = pcapgo.NewNgWriterInterface(w, intf, opts)
		} else {
			_, err = c.w.AddInterface(intf)
		}
		if err != nil {
			return nil, fmt.Errorf("capture: interface for nic %q: %w", p.name, err)
		}
		p.taps = append(p.taps, captureTap{c: c, iface: i})
	}
	return c, nil
}

func (c *Capture) write(iface int, at time.Duration, frame []byte) {
	data := frame
	if c.snaplen > 0 && len(data) > c.snaplen {
		data = data[:c.snaplen]
	}
	ci := gopacket.CaptureInfo{
		Timestamp:      CaptureEpoch().Add(at),
		CaptureLength:  len(data),
		Length:         len(frame),
		InterfaceIndex: iface,
	}
	if err := c.w.WritePacket(ci, data); err != nil {
		c.stats.WriteErrors++
		if c.err == nil {
			c.err = fmt.Errorf("capture: write frame: %w", err)
		}
		return
	}
	c.stats.Frames++
	c.stats.Bytes += uint64(len(data))
}

// Flush writes out buffered frames; call it before closing the writer.
func (c *Capture) Flush() error {
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("capture: flush: %w", err)
	}
	return c.err
}

// Err returns the first write error, if any.
func (c *Capture) Err() error { return c.err }

// Stats returns the capture's counters.
func (c *Capture) Stats() CaptureStats { return c.stats }
