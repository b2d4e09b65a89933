package pktgen_test

import (
	"net/netip"
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/pktgen"
	"github.com/savanna-sim/savanna/apps/testpmd"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
)

// bench is a generator's port ("gen") and a device under test's ("dut")
// joined by a link, with a generator on the gen's queue 0, on a
// poll-mode core of its own.
type bench struct {
	eng  *sim.Engine
	gen  *simhost.NIC
	dut  *simhost.NIC
	link *nic.Link
	g    *pktgen.Generator
	core *sim.Core
}

// newBench builds the two ports and starts a generator of cfg on the
// gen's queue 0, from 10.0.0.1 to 10.0.0.2. Nothing runs on the dut
// until the spec attaches a reflector or a sink.
func newBench(cfg pktgen.Config, gen, dut simhost.NICConfig, link nic.LinkConfig) *bench {
	eng := sim.NewEngine(1)
	gen.Name, gen.ID = "gen", 0
	dut.Name, dut.ID = "dut", 1
	g, err := simhost.NewNIC(eng, gen)
	Expect(err).NotTo(HaveOccurred())
	d, err := simhost.NewNIC(eng, dut)
	Expect(err).NotTo(HaveOccurred())
	l, err := nic.NewLink(eng, "wire", g.Port, d.Port, link)
	Expect(err).NotTo(HaveOccurred())
	gn, err := pktgen.New(cfg, endpoints(g, d), g.Port, 0, g.Pools[0])
	Expect(err).NotTo(HaveOccurred())
	core, err := g.NewCore(0, true)
	Expect(err).NotTo(HaveOccurred())
	Expect(simhost.BindApp(core, g.Port, 0, "pktgen", gn)).To(Succeed())
	return &bench{eng: eng, gen: g, dut: d, link: l, g: gn, core: core}
}

// endpoints addresses frames from gen's port to dut's.
func endpoints(gen, dut *simhost.NIC) pktgen.Endpoints {
	return pktgen.Endpoints{SrcMAC: gen.Port.MACAddr(), DstMAC: dut.Port.MACAddr(),
		SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr("10.0.0.2")}
}

// reflect runs testpmd in macswap mode on the dut's queue 0, on CPU 1:
// every frame goes back to the generator.
func (b *bench) reflect() *testpmd.Forwarder {
	f, err := testpmd.New(testpmd.Config{Forward: testpmd.ModeMACSwap}, b.dut.Port, 0)
	Expect(err).NotTo(HaveOccurred())
	core, err := b.dut.NewCore(1, true)
	Expect(err).NotTo(HaveOccurred())
	Expect(simhost.BindApp(core, b.dut.Port, 0, "testpmd", f)).To(Succeed())
	return f
}

// frame is a frame a sink received.
type frame struct {
	queue int
	data  []byte
	at    time.Duration // when the NIC received it
}

// sink drains every rx queue of the dut and keeps a copy of each frame.
type sink struct {
	port   *nic.Port
	queues int
	frames []frame
	pkts   [32]*hw.Mbuf
}

// drain attaches a sink to all of the dut's queues, on CPU 1.
func (b *bench) drain() *sink {
	s := &sink{port: b.dut.Port, queues: len(b.dut.Pools)}
	core, err := b.dut.NewCore(1, true)
	Expect(err).NotTo(HaveOccurred())
	for q := range s.queues {
		Expect(b.dut.Port.BindQueue(q, core.Meter("sink;driver"))).To(Succeed())
	}
	core.AttachAs("sink", s)
	return s
}

// Poll implements sim.Poller. It needs no deadline: arrivals ring the
// core's doorbell.
func (s *sink) Poll(hw.Meter) (bool, time.Duration) {
	worked := false
	for q := range s.queues {
		n := s.port.RxBurst(q, s.pkts[:])
		for _, m := range s.pkts[:n] {
			s.frames = append(s.frames, frame{queue: q, data: append([]byte(nil), m.Data()...), at: time.Duration(m.Timestamp)})
			m.Free()
		}
		clear(s.pkts[:n])
		worked = worked || n > 0
	}
	return worked, sim.Never
}

// serialization is the time a frame of size bytes (without FCS) takes
// on a link of bps.
func serialization(size int, bps int64) time.Duration {
	return time.Duration(int64(nic.WireBytes(size)) * 8 * int64(time.Second) / bps)
}
