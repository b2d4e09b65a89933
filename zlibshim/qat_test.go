package zlibshim_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
	"github.com/savanna-sim/savanna/zlibshim"
)

// qatRig is a QAT service of one c62x device and a process of the shim
// bound to a counting meter.
type qatRig struct {
	svc *qat.Service
	dev *qat.Device
	m   *hw.CountingMeter
	p   *zlibshim.Process
}

func newQATRig(dc qat.DeviceConfig, cfg zlibshim.Config) *qatRig {
	if dc.Model == "" {
		dc.Model = "c62x"
	}
	svc, err := qat.NewService(qat.Config{Devices: []qat.DeviceConfig{dc}}, qat.Options{RNG: rand.New(rand.NewPCG(5, 5))})
	Expect(err).NotTo(HaveOccurred())
	m := &hw.CountingMeter{}
	svc.BindProcess(7, m)
	if cfg.Completion == zlibshim.CompletionThread {
		Expect(svc.SetCompletionMode(7, qat.Thread)).To(Succeed())
	}
	p, err := zlibshim.NewProcess(svc, 7, m, cfg)
	Expect(err).NotTo(HaveOccurred())
	return &qatRig{svc: svc, dev: svc.Devices()[0], m: m, p: p}
}

// compressRequests compresses data request by request, calling before(i)
// ahead of request i and advancing the clock 100 us after each.
func (q *qatRig) compressRequests(f zlibshim.Format, data []byte, before func(i int)) []byte {
	d, err := q.p.NewDeflater(zlibshim.DeflateOptions{Format: f, Level: 6})
	Expect(err).NotTo(HaveOccurred())
	rs := zlibshim.DefaultRequestSize
	var out bytes.Buffer
	buf := make([]byte, 1<<20)
	for i := 0; i*rs < len(data); i++ {
		before(i)
		d.NextIn, d.NextOut = data[i*rs:min(len(data), (i+1)*rs)], buf
		Expect(d.Deflate(zlibshim.NoFlush)).To(Succeed())
		out.Write(buf[:len(buf)-len(d.NextOut)])
		q.m.Idle(100 * time.Microsecond)
	}
	d.NextOut = buf
	Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStreamEnd))
	out.Write(buf[:len(buf)-len(d.NextOut)])
	Expect(d.DeflateEnd()).To(Succeed())
	return out.Bytes()
}

var _ = Describe("On the QAT model (sim/qat)", func() {
	r := rand.New(rand.NewPCG(4, 4))
	data := textOf(r, 32*zlibshim.DefaultRequestSize, []string{"sim ", "qat ", "c62x ", "engine ", "ring ", "usdm ", "\n", "<html>"})

	DescribeTable("round trips through the device in every format, read by Go, the shim and gzip -d",
		func(f zlibshim.Format, mode zlibshim.CompletionMode) {
			q := newQATRig(qat.DeviceConfig{}, zlibshim.Config{Completion: mode})
			for _, it := range corpus(false) {
				comp := q.compressRequests(f, it.data, func(int) {})
				got, err := goInflate(f, comp)
				Expect(err).NotTo(HaveOccurred(), it.name)
				same(got, it.data)
				got, err = shimInflate(q.p, f, comp)
				Expect(err).NotTo(HaveOccurred(), it.name)
				same(got, it.data)
				if gzipBinary() != "" && (f == zlibshim.FormatGzip || f == zlibshim.FormatGzipExt) {
					got, err = gunzip(comp)
					Expect(err).NotTo(HaveOccurred(), it.name)
					same(got, it.data)
				}
			}
			st := q.p.Stats()
			Expect(st.HWRequests).To(BeNumerically(">", 10))
			Expect(st.Fallbacks.Total()).To(BeZero())
			Expect(st.SmallRequests).NotTo(BeZero(), "the 1-byte input went to software")
			ps := q.svc.ProcessStats(7)
			Expect(ps.Requests).To(BeEquivalentTo(st.HWRequests))
			if mode == zlibshim.CompletionPolling {
				Expect(ps.Syscalls.Futex).To(BeZero(), "polling mode makes no futex calls")
			} else {
				Expect(ps.Syscalls.Futex).To(BeNumerically(">=", st.HWRequests), "thread mode sleeps on a futex per request")
			}
		},
		Entry("deflate, polling", zlibshim.FormatRaw, zlibshim.CompletionPolling),
		Entry("zlib, polling", zlibshim.FormatZlib, zlibshim.CompletionPolling),
		Entry("gzip, polling", zlibshim.FormatGzip, zlibshim.CompletionPolling),
		Entry("gzipext, polling", zlibshim.FormatGzipExt, zlibshim.CompletionPolling),
		Entry("gzip, thread", zlibshim.FormatGzip, zlibshim.CompletionThread),
	)

	type qatFault struct {
		kind    qat.FaultKind
		params  qat.FaultParams
		reason  func(zlibshim.FallbackCounts) uint64
		atStart bool
	}
	DescribeTable("faults: no byte lost or doubled, the reason counted, hardware back once the fault clears",
		func(f zlibshim.Format, fc qatFault) {
			q := newQATRig(qat.DeviceConfig{}, zlibshim.Config{Timeout: 5 * time.Millisecond})
			comp := q.compressRequests(f, data, func(i int) {
				switch {
				case i == 0 && fc.atStart, i == 4 && !fc.atStart:
					p := fc.params
					p.At = q.m.Now()
					Expect(q.dev.InjectFault(fc.kind, p)).To(Succeed())
				case i == 6:
					Expect(q.dev.Clear(fc.kind)).To(Succeed())
				}
			})
			got, err := goInflate(f, comp)
			Expect(err).NotTo(HaveOccurred())
			same(got, data)
			st := q.p.Stats()
			Expect(fc.reason(st.Fallbacks)).To(BeNumerically(">=", 1), "%+v", st.Fallbacks)
			Expect(st.ReturnsToHW).To(BeNumerically(">=", 1))
			Expect(st.HWBytesIn + st.SWBytesIn).To(BeEquivalentTo(len(data)))
			Expect(st.HWRequests).To(BeNumerically(">=", 18))
			q.p.Exit()
			Expect(q.svc.ProcessStats(7).Leaked.Buffers).To(BeZero())
		},
		func() []TableEntry {
			noInst := func(c zlibshim.FallbackCounts) uint64 { return c.NoInstance }
			noMem := func(c zlibshim.FallbackCounts) uint64 { return c.NoPinnedMemory }
			engine := func(c zlibshim.FallbackCounts) uint64 { return c.EngineError }
			timeout := func(c zlibshim.FallbackCounts) uint64 { return c.Timeout }
			down := func(c zlibshim.FallbackCounts) uint64 { return c.DeviceDown }
			cases := []struct {
				name string
				fc   qatFault
			}{
				{"no instance (instance_exhaustion)", qatFault{kind: qat.FaultInstanceExhaustion, reason: noInst, atStart: true}},
				{"USDM exhausted (usdm_exhaustion)", qatFault{kind: qat.FaultUSDMExhaustion, reason: noMem, atStart: true}},
				{"engine error mid-stream", qatFault{kind: qat.FaultEngineError, params: qat.FaultParams{Rate: 1}, reason: engine}},
				{"hang mid-stream", qatFault{kind: qat.FaultHang, reason: timeout}},
				{"reset mid-stream", qatFault{kind: qat.FaultReset, params: qat.FaultParams{Delay: 100 * time.Millisecond}, reason: down}},
				{"heartbeat failure mid-stream", qatFault{kind: qat.FaultHeartbeat, reason: down}},
			}
			var es []TableEntry
			for _, c := range cases {
				for _, f := range []zlibshim.Format{zlibshim.FormatGzip, zlibshim.FormatGzipExt, zlibshim.FormatZlib} {
					es = append(es, Entry(c.name+", "+f.String(), f, c.fc))
				}
			}
			return es
		}(),
	)

	It("reproduces the hugepage leak: streams never ended run the hardware dry, the shim serves in software", func() {
		q := newQATRig(qat.DeviceConfig{Instances: 16, USDM: qat.USDMConfig{MaxHugePages: 8, MaxHugePagesPerProcess: 4}},
			zlibshim.Config{InstancePerStream: true, LeakAge: 50 * time.Millisecond})
		payload := data[:200_000]
		// Tengine before its fix: each request's stream is dropped without
		// DeflateEnd.
		var outs [][]byte
		for i := 0; i < 60; i++ {
			d, err := q.p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: 1})
			Expect(err).NotTo(HaveOccurred())
			var out bytes.Buffer
			zw := make([]byte, 1<<20)
			d.NextIn, d.NextOut = payload, zw
			Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStreamEnd))
			out.Write(zw[:len(zw)-len(d.NextOut)])
			outs = append(outs, out.Bytes())
			q.m.Idle(time.Millisecond)
		}
		for _, o := range outs {
			got, err := goInflate(zlibshim.FormatGzip, o)
			Expect(err).NotTo(HaveOccurred())
			same(got, payload)
		}
		q.m.Idle(time.Second)
		st := q.p.Stats()
		Expect(st.Fallbacks.NoInstance+st.Fallbacks.NoPinnedMemory).To(BeNumerically(">", 0), "hardware ran dry")
		Expect(st.SWBytesIn).To(BeNumerically(">", 0), "served in software")
		Expect(st.HWRequests).To(BeNumerically(">", 0))
		status := q.p.Status()
		Expect(status.OpenStreams).To(Equal(60))
		Expect(status.LeakedStreams).To(Equal(60), "streams idle past leak_age")
		Expect(status.PinnedInUse).To(BeNumerically(">", 0))
		Expect(q.p.LeakReport()).NotTo(BeEmpty())
		Expect(q.p.LeakReport()[0].HoldsInstance).To(BeTrue())

		By("reclaiming the leaked streams' resources, hardware serves again")
		Expect(q.p.ReclaimLeaked()).To(Equal(60))
		Expect(q.p.Status().PinnedInUse).To(BeZero())
		Expect(q.p.Status().InstancesAttached).To(BeZero())
		before := q.p.Stats().HWRequests
		q.compressRequests(zlibshim.FormatGzip, data[:20*zlibshim.DefaultRequestSize], func(int) {})
		Expect(q.p.Stats().HWRequests).To(BeNumerically(">", before))

		By("at exit the unended streams are counted and nothing is left at the driver")
		q.p.Exit()
		Expect(q.p.Stats().StreamsLeaked).To(BeEquivalentTo(60))
		Expect(q.svc.ProcessStats(7).Leaked.Buffers).To(BeZero())
	})

	It("survives a reload: the new worker finds no instance, serves in software, and takes the hardware back when the old one exits", func() {
		svc, err := qat.NewService(qat.Config{Devices: []qat.DeviceConfig{{Model: "c62x", Instances: 1}}}, qat.Options{RNG: rand.New(rand.NewPCG(6, 6))})
		Expect(err).NotTo(HaveOccurred())
		mOld, mNew := &hw.CountingMeter{}, &hw.CountingMeter{}
		svc.BindProcess(1, mOld)
		svc.BindProcess(2, mNew)
		old, _ := zlibshim.NewProcess(svc, 1, mOld, zlibshim.Config{})
		young, _ := zlibshim.NewProcess(svc, 2, mNew, zlibshim.Config{})
		body := data[:3*zlibshim.DefaultRequestSize]
		gz := func(p *zlibshim.Process) {
			var b bytes.Buffer
			w, _ := p.NewWriterLevel(&b, zlibshim.FormatGzip, 1)
			_, _ = w.Write(body)
			Expect(w.Close()).To(Succeed())
			got, err := goInflate(zlibshim.FormatGzip, b.Bytes())
			Expect(err).NotTo(HaveOccurred())
			same(got, body)
		}
		gz(old) // the old worker holds the only instance
		for range 4 {
			gz(young) // every request still served
		}
		Expect(young.Stats().Fallbacks.NoInstance).To(BeNumerically(">=", 1))
		Expect(young.Stats().HWRequests).To(BeZero())
		old.Exit()
		for range 4 {
			gz(young)
		}
		Expect(young.Stats().ReturnsToHW).To(BeEquivalentTo(1))
		Expect(young.Stats().HWRequests).To(BeNumerically(">", 0))
		Expect(young.Status().InstancesAttached).To(Equal(1))
	})

	It("takes its instance at Start, as a worker's init does, and counts a start without one", func() {
		svc, err := qat.NewService(qat.Config{Devices: []qat.DeviceConfig{{Model: "c62x", Instances: 1}}}, qat.Options{RNG: rand.New(rand.NewPCG(8, 8))})
		Expect(err).NotTo(HaveOccurred())
		first, _ := zlibshim.NewProcess(svc, 1, &hw.CountingMeter{}, zlibshim.Config{})
		second, _ := zlibshim.NewProcess(svc, 2, &hw.CountingMeter{}, zlibshim.Config{Policy: zlibshim.PolicyHardwareOnly})
		Expect(first.Start()).To(Succeed())
		Expect(first.Status().InstancesAttached).To(Equal(1))
		Expect(second.Start()).To(MatchError(ContainSubstring("start")))
		Expect(second.Stats().StartFailures).To(BeEquivalentTo(1))
		Expect(second.Stats().Fallbacks.NoInstance).To(BeEquivalentTo(1))
		// Under hardware-only its requests fail until an instance is free.
		var b bytes.Buffer
		w, _ := second.NewWriterLevel(&b, zlibshim.FormatGzip, 1)
		_, _ = w.Write(data[:3*zlibshim.DefaultRequestSize])
		Expect(w.Close()).To(MatchError(zlibshim.ErrHardware))
		first.Exit()
		Expect(second.Start()).To(Succeed())
		Expect(second.Status().InstancesAttached).To(Equal(1))
	})

	DescribeTable("counts the syscalls per request of each driver and completion mode (the seed's open/ioctl pairs and futex storm)",
		func(driver qat.Driver, mode zlibshim.CompletionMode, perRequest float64) {
			q := newQATRig(qat.DeviceConfig{Driver: driver}, zlibshim.Config{Completion: mode})
			body := data[:20_000] // one HTTP response: one request
			attach := q.svc.ProcessStats(7).Syscalls.Total()
			const responses = 50
			for range responses {
				var b bytes.Buffer
				w, _ := q.p.NewWriterLevel(&b, zlibshim.FormatGzip, 1)
				_, _ = w.Write(body)
				Expect(w.Close()).To(Succeed())
			}
			ps := q.svc.ProcessStats(7)
			Expect(q.p.Stats().HWRequests).To(BeEquivalentTo(responses))
			got := float64(ps.Syscalls.Total()-attach-ps.Syscalls.Mmap) / responses
			GinkgoWriter.Printf("%s %v: %.2f syscalls per request (%+v)\n", driver, mode, got, ps.Syscalls)
			Expect(got).To(BeNumerically("~", perRequest, 0.5))
		},
		Entry("oot31092, polling: open and ioctl in pairs, 4 per request", qat.DriverOOT31092, zlibshim.CompletionPolling, 4.0),
		Entry("oot40052, polling: none", qat.DriverOOT40052, zlibshim.CompletionPolling, 0.0),
		Entry("oot40052, thread: a futex wait and wake per request", qat.DriverOOT40052, zlibshim.CompletionThread, 2.0),
	)

	It("inflates streams written by the device with the shim's Reader in pieces", func() {
		q := newQATRig(qat.DeviceConfig{}, zlibshim.Config{})
		comp := q.compressRequests(zlibshim.FormatGzipExt, data, func(int) {})
		zr, err := q.p.NewReader(io.MultiReader(bytes.NewReader(comp[:1000]), bytes.NewReader(comp[1000:])), zlibshim.FormatGzip)
		Expect(err).NotTo(HaveOccurred())
		got, err := io.ReadAll(zr)
		Expect(err).NotTo(HaveOccurred())
		same(got, data)
		Expect(zr.Close()).To(Succeed())
	})
})
