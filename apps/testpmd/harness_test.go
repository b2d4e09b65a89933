package testpmd_test

import (
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/testpmd"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
)

// bench is a probe's port ("gen") and the forwarder's ("dut") joined by
// a 10 us link, the probe on a poll-mode core of its own.
type bench struct {
	eng   *sim.Engine
	gen   *simhost.NIC
	dut   *simhost.NIC
	probe *probe
}

// newBench builds the two ports and a probe on the gen's queue 0.
// Nothing runs on the dut until the spec forwards.
func newBench(dut simhost.NICConfig) *bench {
	eng := sim.NewEngine(1)
	dut.Name, dut.ID = "dut", 1
	g, err := simhost.NewNIC(eng, simhost.NICConfig{Name: "gen"})
	Expect(err).NotTo(HaveOccurred())
	d, err := simhost.NewNIC(eng, dut)
	Expect(err).NotTo(HaveOccurred())
	_, err = nic.NewLink(eng, "wire", g.Port, d.Port, nic.LinkConfig{Latency: 10 * time.Microsecond})
	Expect(err).NotTo(HaveOccurred())
	p := &probe{port: g.Port, pool: g.Pools[0]}
	core, err := g.NewCore(0, true)
	Expect(err).NotTo(HaveOccurred())
	Expect(simhost.BindApp(core, g.Port, 0, "probe", p)).To(Succeed())
	p.core = core
	return &bench{eng: eng, gen: g, dut: d, probe: p}
}

// forward runs a forwarder of cfg on the dut's queue 0, on CPU 1.
func (b *bench) forward(cfg testpmd.Config) *testpmd.Forwarder {
	f, err := testpmd.New(cfg, b.dut.Port, 0)
	Expect(err).NotTo(HaveOccurred())
	core, err := b.dut.NewCore(1, true)
	Expect(err).NotTo(HaveOccurred())
	Expect(simhost.BindApp(core, b.dut.Port, 0, "testpmd", f)).To(Succeed())
	return f
}

// frames returns n frames from the gen to the dut of sizes 60 to 1059
// bytes, their payloads from the engine's stream "frames".
func (b *bench) frames(n int) [][]byte {
	rng := b.eng.RNG("frames")
	out := make([][]byte, n)
	for i := range out {
		f := make([]byte, 60+rng.IntN(1000))
		for j := range f {
			f[j] = byte(rng.Uint32())
		}
		copy(f, b.dut.Port.MACAddr())
		copy(f[6:], b.gen.Port.MACAddr())
		f[12], f[13] = 0x88, 0xb5 // local experimental EtherType
		out[i] = f
	}
	return out
}

// probe sends frames as fast as its tx ring takes them and keeps a copy
// of every frame it receives.
type probe struct {
	port *nic.Port
	pool *nic.Mempool
	core *sim.Core
	out  [][]byte
	got  [][]byte
	pkts [32]*hw.Mbuf
}

// send queues frames and wakes the probe's core to send them.
func (p *probe) send(frames [][]byte) {
	p.out = append(p.out, frames...)
	p.core.Wake(0)
}

// Poll implements sim.Poller: it receives a burst, then sends what the
// tx ring takes, and asks for another turn while frames wait.
func (p *probe) Poll(m hw.Meter) (bool, time.Duration) {
	n := p.port.RxBurst(0, p.pkts[:])
	for _, mb := range p.pkts[:n] {
		p.got = append(p.got, append([]byte(nil), mb.Data()...))
		mb.Free()
	}
	worked := n > 0
	if len(p.out) > 0 {
		batch := p.pkts[:min(len(p.out), len(p.pkts))]
		Expect(p.pool.GetBulk(batch)).To(BeTrue())
		for i, mb := range batch {
			Expect(mb.SetData(p.out[i])).To(Succeed())
		}
		sent := p.port.TxBurst(0, batch)
		for _, mb := range batch[sent:] {
			mb.Free()
		}
		p.out = p.out[sent:]
		worked = worked || sent > 0
	}
	clear(p.pkts[:])
	if len(p.out) > 0 {
		return worked, m.Now()
	}
	return worked, sim.Never
}
