package rt

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/spsc"
)

// fanoutDev is the port as one lcore's instance sees it when there are
// several lcores: receive bursts also carry copies of ARP frames that
// arrived on the other lcores' queues, since every instance keeps its own
// neighbour cache (Gazelle likewise hands ARP to every stack thread).
// Everything else passes through to the port.
type fanoutDev struct {
	hw.EthDev
	rt *Runtime
	q  int
	// in[j] carries copies from lcore j to this one.
	in []*spsc.Ring[*hw.Mbuf]
}

// arpCopyRing is the size of each lcore-to-lcore ARP ring.
const arpCopyRing = 256

// RxBurst receives from the port's queue, copies ARP frames to the other
// lcores, and appends the copies the others sent here.
func (f *fanoutDev) RxBurst(q int, pkts []*hw.Mbuf) int {
	n := f.EthDev.RxBurst(q, pkts)
	for _, m := range pkts[:n] {
		d := m.Data()
		if len(d) >= 14 && binary.BigEndian.Uint16(d[12:14]) == 0x0806 {
			f.rt.copyARP(f.q, m)
		}
	}
	for j, r := range f.in {
		if j == f.q || n == len(pkts) {
			continue
		}
		n += r.DequeueBurst(pkts[n:])
	}
	return n
}

// copyARP sends a copy of m to every other lcore; copies that find no
// mbuf or no ring room are dropped and counted.
func (r *Runtime) copyARP(from int, m *hw.Mbuf) {
	for j, lc := range r.lcores {
		if j == from {
			continue
		}
		c := r.pool.Get()
		if c == nil {
			r.arpCopyDrops.Add(1)
			continue
		}
		if err := c.SetData(m.Bytes(r.fan[from].scratch[:0])); err != nil {
			c.Free()
			r.arpCopyDrops.Add(1)
			continue
		}
		if !r.fan[j].in[from].Enqueue(c) {
			c.Free()
			r.arpCopyDrops.Add(1)
			continue
		}
		lc.Wake()
	}
}
