package nic_test

import (
	"net"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
)

var _ = Describe("Switch", func() {
	var (
		eng   *sim.Engine
		sw    *nic.Switch
		ports []*nic.Port
		pools []*nic.Mempool
		macs  []net.HardwareAddr
	)
	BeforeEach(func() {
		eng = sim.NewEngine(1)
		mem := newTestMem(1<<16, 1)
		var err error
		sw, err = nic.NewSwitch(eng, nic.SwitchConfig{Name: "tor", Ports: 3, ForwardDelay: 500 * time.Nanosecond})
		Expect(err).NotTo(HaveOccurred())
		ports, pools, macs = nil, nil, nil
		for i := 0; i < 3; i++ {
			p, pool := newPort(eng, mem, uint16(i), string(rune('a'+i)), defaultOpts())
			_, err := nic.NewLink(eng, p.Name()+"-tor", p, sw.Port(i), nic.LinkConfig{Latency: time.Microsecond})
			Expect(err).NotTo(HaveOccurred())
			ports, pools = append(ports, p), append(pools, pool)
			macs = append(macs, p.MACAddr())
		}
	})

	send := func(from, to int, dst net.HardwareAddr) {
		f := buildFrame(flow{srcMAC: macs[from], dstMAC: dst, src: net.IPv4(10, 0, 0, byte(from)), dst: net.IPv4(10, 0, 0, byte(to)), sport: 1, dport: 2, payload: 20})
		Expect(ports[from].TxBurst(0, []*hw.Mbuf{mbufOf(pools[from], f)})).To(Equal(1))
		eng.Run()
	}
	counts := func() []int {
		var out []int
		for _, p := range ports {
			n := p.RxQueueCount(0)
			var buf [16]*hw.Mbuf
			for _, m := range buf[:p.RxBurst(0, buf[:])] {
				m.Free()
			}
			out = append(out, n)
		}
		return out
	}

	It("floods unknown destinations, then forwards to the learned port", func() {
		send(0, 1, macs[1])
		Expect(counts()).To(Equal([]int{0, 1, 1})) // unknown: flooded
		at, ok := sw.Lookup([6]byte(macs[0]))
		Expect(ok).To(BeTrue())
		Expect(at).To(Equal(0))
		send(1, 0, macs[0])
		Expect(counts()).To(Equal([]int{1, 0, 0})) // learned: forwarded
		send(0, 1, macs[1])
		Expect(counts()).To(Equal([]int{0, 1, 0}))
		send(2, 0, net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		Expect(counts()).To(Equal([]int{1, 1, 0})) // broadcast
		st := sw.Stats()
		Expect(st.Received).To(Equal(uint64(4)))
		Expect(st.Flooded).To(Equal(uint64(2)))
		Expect(st.Forwarded).To(Equal(uint64(6)))
		Expect(st.Learned).To(Equal(uint64(3)))
	})

	It("filters frames for a host on the port they came from", func() {
		send(1, 0, macs[0]) // learn b on port 1 (flooded)
		counts()
		send(0, 0, macs[1]) // learn a
		counts()
		// A frame from port 1 to b's MAC goes nowhere.
		send(1, 1, macs[1])
		Expect(counts()).To(Equal([]int{0, 0, 0}))
		Expect(sw.Stats().Filtered).To(Equal(uint64(1)))
	})

	It("tail-drops when an output port's buffer is full", func() {
		eng := sim.NewEngine(1)
		mem := newTestMem(1<<16, 1)
		sw, err := nic.NewSwitch(eng, nic.SwitchConfig{Name: "s", Ports: 3, BufferBytes: 16 << 10})
		Expect(err).NotTo(HaveOccurred())
		var ps []*nic.Port
		var pls []*nic.Mempool
		for i := 0; i < 3; i++ {
			o := defaultOpts()
			o.rxRing = 4096
			p, pool := newPort(eng, mem, uint16(i), string(rune('a'+i)), o)
			bw := ""
			if i == 2 {
				bw = "1Gbps" // the bottleneck
			}
			_, err := nic.NewLink(eng, p.Name(), p, sw.Port(i), nic.LinkConfig{Bandwidth: bw})
			Expect(err).NotTo(HaveOccurred())
			ps, pls = append(ps, p), append(pls, pool)
		}
		// Teach the switch where c is.
		Expect(ps[2].TxBurst(0, []*hw.Mbuf{mbufOf(pls[2], buildFrame(flow{srcMAC: ps[2].MACAddr(), dstMAC: ps[0].MACAddr(), src: net.IPv4(1, 1, 1, 1), dst: net.IPv4(1, 1, 1, 2), payload: 10}))})).To(Equal(1))
		eng.Run()
		for src := 0; src < 2; src++ {
			burst := make([]*hw.Mbuf, 100)
			for i := range burst {
				burst[i] = mbufOf(pls[src], buildFrame(flow{srcMAC: ps[src].MACAddr(), dstMAC: ps[2].MACAddr(), src: net.IPv4(1, 1, 1, 1), dst: net.IPv4(1, 1, 1, 2), payload: 1000}))
			}
			Expect(ps[src].TxBurst(0, burst)).To(Equal(100))
		}
		eng.Run()
		st := sw.Stats()
		Expect(st.DroppedBufferFull).To(BeNumerically(">", 0))
		Expect(st.Forwarded + st.DroppedBufferFull).To(Equal(uint64(200 + 2))) // +2: the flooded first frame
		Expect(ps[2].Stats().IPackets).To(Equal(st.Forwarded - 2))
	})
})
