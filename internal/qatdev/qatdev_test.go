package qatdev_test

import (
	"os"
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/savanna-sim/savanna/internal/qatdev"
	"github.com/savanna-sim/savanna/sim/qat"
)

// serve starts a device process in the test process on a fresh socket.
func serve(dc qat.DeviceConfig) (*qatdev.Server, string) {
	srv, err := qatdev.NewServer(qatdev.Config{QAT: qat.Config{Devices: []qat.DeviceConfig{dc}}})
	Expect(err).NotTo(HaveOccurred())
	dir, err := os.MkdirTemp("", "qatdev")
	Expect(err).NotTo(HaveOccurred())
	sock := filepath.Join(dir, "qat.sock")
	Expect(srv.Listen(sock)).To(Succeed())
	go func() { _ = srv.Serve() }()
	DeferCleanup(func() {
		Expect(srv.Close()).To(Succeed())
		_ = os.RemoveAll(dir)
	})
	return srv, sock
}

// proc is pid's telemetry.
func proc(t qatdev.Telemetry, pid int) qatdev.ProcessTelemetry {
	for _, p := range t.Processes {
		if p.PID == pid {
			return p
		}
	}
	return qatdev.ProcessTelemetry{}
}

var _ = Describe("the device process", func() {
	It("compresses a worker process's data on the device: the output inflates to the input", func() {
		srv, sock := serve(qat.DeviceConfig{Model: "c62x", Instances: 6})
		w := startWorker(sock, "hardware-only")
		defer w.kill()
		r := w.do("compress 262144")
		Expect(r.OK).To(BeTrue(), r.Err)
		Expect(r.Shim.HWRequests).To(BeNumerically(">=", 4))
		Expect(r.Shim.HWBytesIn).To(BeEquivalentTo(262144))
		Expect(r.Shim.SWRequests).To(BeZero())

		t := srv.Telemetry()
		p := proc(t, w.ready.PID)
		Expect(p.Connected).To(BeTrue())
		Expect(p.BytesIn).To(BeEquivalentTo(262144))
		Expect(p.Requests).To(Equal(r.Shim.HWRequests))
		Expect(p.Instances).To(Equal(1))
		var onDevice uint64
		for _, it := range t.Instances {
			if it.PID == w.ready.PID {
				onDevice += it.BytesIn
				Expect(it.Busy).To(BeNumerically(">", 0))
			}
		}
		Expect(onDevice).To(BeEquivalentTo(262144))
		Expect(t.Model.Devices[0].BytesIn.Compress).To(BeEquivalentTo(262144))

		Expect(w.do("exit").OK).To(BeTrue())
		Expect(w.wait()).To(Equal(0))
		Eventually(func() bool { return proc(srv.Telemetry(), w.ready.PID).Connected }).Should(BeFalse())
		t = srv.Telemetry()
		Expect(t.Server.Unclean).To(BeZero())
		Expect(t.Model.Leaked.Buffers).To(BeZero())
		Expect(t.Model.InstancesInUse).To(BeZero())
	})

	Describe("a reload that doubles the workers (the seed's story, 6 instances)", func() {
		It("under failover: new workers without an instance compress in software, none fails; after the old ones exit, attaches succeed", func() {
			srv, sock := serve(qat.DeviceConfig{Model: "dh895xcc", Driver: qat.DriverOOT31092, Instances: 6})
			var old, nw []*worker
			for range 4 {
				w := startWorker(sock, "failover")
				defer w.kill()
				Expect(w.ready.Err).To(BeEmpty())
				old = append(old, w)
			}
			for range 4 {
				w := startWorker(sock, "failover")
				defer w.kill()
				nw = append(nw, w)
			}
			Expect(nw[0].ready.Err).To(BeEmpty())
			Expect(nw[1].ready.Err).To(BeEmpty())
			for _, w := range nw[2:] {
				Expect(w.ready.Err).To(ContainSubstring("no_instance"))
				Expect(w.ready.Shim.Fallbacks.NoInstance).To(BeEquivalentTo(1))
			}
			for i, w := range nw {
				r := w.do("compress 131072")
				Expect(r.OK).To(BeTrue(), "new worker %d: %s", i, r.Err)
				if i < 2 {
					Expect(r.Shim.HWRequests).To(BeNumerically(">", 0))
					Expect(r.Shim.SWRequests).To(BeZero())
				} else {
					Expect(r.Shim.HWRequests).To(BeZero())
					Expect(r.Shim.SWRequests).To(BeNumerically(">", 0))
					Expect(r.Shim.Fallbacks.NoInstance).To(BeNumerically(">=", 2))
				}
			}
			t := srv.Telemetry()
			Expect(t.Model.InstancesInUse).To(Equal(6))
			Expect(t.Model.AttachFailures.NoInstance).To(BeNumerically(">=", 4))

			for _, w := range old {
				Expect(w.do("exit").OK).To(BeTrue())
				Expect(w.wait()).To(Equal(0))
			}
			Eventually(func() int { return srv.Telemetry().Model.InstancesInUse }).Should(Equal(2))
			for _, w := range nw[2:] {
				r := w.do("compress 131072")
				Expect(r.OK).To(BeTrue(), r.Err)
				Expect(r.Shim.HWRequests).To(BeNumerically(">", 0), "attach succeeds again")
				Expect(r.Shim.ReturnsToHW).To(BeEquivalentTo(1))
			}
			Expect(srv.Telemetry().Model.InstancesInUse).To(Equal(4))
		})

		It("under hardware-only: the requests of the workers without an instance fail, as the seed saw", func() {
			_, sock := serve(qat.DeviceConfig{Model: "dh895xcc", Driver: qat.DriverOOT31092, Instances: 6})
			for range 4 {
				w := startWorker(sock, "hardware-only")
				defer w.kill()
			}
			var nw []*worker
			for range 4 {
				w := startWorker(sock, "hardware-only")
				defer w.kill()
				nw = append(nw, w)
			}
			for i, w := range nw {
				r := w.do("compress 131072")
				if i < 2 {
					Expect(r.OK).To(BeTrue(), r.Err)
					continue
				}
				Expect(r.OK).To(BeFalse())
				Expect(r.Err).To(ContainSubstring("no_instance"))
				Expect(r.Shim.HardwareOnlyErrors).To(BeNumerically(">", 0))
			}
		})
	})

	Describe("pinned memory (the seed's hugepage leak)", func() {
		It("counts as leaked the pinned memory of a worker that exits without ending its streams", func() {
			srv, sock := serve(qat.DeviceConfig{Model: "c62x", Instances: 6})
			w := startWorker(sock, "hardware-only")
			defer w.kill()
			r := w.do("open 3")
			Expect(r.OK).To(BeTrue(), r.Err)
			Expect(r.Shim.PinnedBytesInUse).To(BeNumerically(">", 0))
			held := proc(srv.Telemetry(), w.ready.PID).PinnedBytes
			Expect(held).To(BeEquivalentTo(r.Shim.PinnedBytesInUse))
			_, _ = w.in.Write([]byte("crash\n"))
			Expect(w.wait()).To(Equal(3))
			Eventually(func() bool { return proc(srv.Telemetry(), w.ready.PID).Connected }).Should(BeFalse())
			t := srv.Telemetry()
			p := proc(t, w.ready.PID)
			Expect(p.Leaked.Buffers).To(BeEquivalentTo(6)) // a source and a destination per stream
			Expect(p.Leaked.Bytes).To(Equal(held))
			Expect(p.PinnedBytes).To(BeZero())
			Expect(t.Server.ExitsWithLeaks).To(BeEquivalentTo(1))
			Expect(t.Server.Unclean).To(BeEquivalentTo(1))
			Expect(t.Model.Nodes[0].PagesInUse).To(BeZero(), "the pages are taken back")
		})

		It("leaks nothing from a worker that ends its streams (DeflateEnd), even when it crashes after", func() {
			srv, sock := serve(qat.DeviceConfig{Model: "c62x", Instances: 6})
			w := startWorker(sock, "hardware-only")
			defer w.kill()
			r := w.do("ended 5")
			Expect(r.OK).To(BeTrue(), r.Err)
			Expect(r.N).To(Equal(5))
			Expect(r.Shim.PinnedBytesInUse).To(BeZero())
			_, _ = w.in.Write([]byte("crash\n"))
			Expect(w.wait()).To(Equal(3))
			Eventually(func() bool { return proc(srv.Telemetry(), w.ready.PID).Connected }).Should(BeFalse())
			t := srv.Telemetry()
			Expect(proc(t, w.ready.PID).Leaked.Buffers).To(BeZero())
			Expect(t.Server.ExitsWithLeaks).To(BeZero())
		})

		It("is drained by a worker that keeps opening streams until the device refuses (no pinned memory), counted", func() {
			srv, sock := serve(qat.DeviceConfig{Model: "c62x", Instances: 6,
				USDM: qat.USDMConfig{MaxHugePages: 64, MaxHugePagesPerProcess: 2}})
			w := startWorker(sock, "failover")
			defer w.kill()
			r := w.do("open 200")
			Expect(r.OK).To(BeTrue(), r.Err)
			Expect(r.N).To(BeNumerically("<", 200))
			Expect(r.Shim.Fallbacks.NoPinnedMemory).To(BeEquivalentTo(1))
			t := srv.Telemetry()
			Expect(proc(t, w.ready.PID).AllocFailures).To(BeNumerically(">=", 1))
			Expect(t.Model.PinnedAllocFailures).To(BeNumerically(">=", 1))
			Expect(t.Server.MemfdFull).To(BeZero(), "the model refused, not the memfd")

			w2 := startWorker(sock, "failover")
			defer w2.kill()
			r = w2.do("ended 200")
			Expect(r.OK).To(BeTrue(), r.Err)
			Expect(r.N).To(Equal(200))
			Expect(r.Shim.Fallbacks.NoPinnedMemory).To(BeZero(), "with DeflateEnd, none")
			Expect(r.Shim.HWRequests).To(BeNumerically(">=", 200))
		})
	})

	It("takes back everything of a worker killed (SIGKILL) mid-request", func() {
		srv, sock := serve(qat.DeviceConfig{Model: "c62x", Instances: 6})
		w := startWorker(sock, "hardware-only")
		defer w.kill()
		_, _ = w.in.Write([]byte("loop\n"))
		Expect(w.read().Event).To(Equal("looping"))
		Eventually(func() uint64 { return proc(srv.Telemetry(), w.ready.PID).Requests }, 10*time.Second).
			Should(BeNumerically(">=", 20))
		Expect(w.cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
		_ = w.cmd.Wait()
		Eventually(func() bool { return proc(srv.Telemetry(), w.ready.PID).Connected }).Should(BeFalse())
		t := srv.Telemetry()
		p := proc(t, w.ready.PID)
		Expect(p.Instances).To(BeZero())
		Expect(p.PinnedBytes).To(BeZero())
		Expect(p.Leaked.Buffers).To(BeNumerically(">", 0), "its open streams' buffers")
		Expect(t.Model.InstancesInUse).To(BeZero())
		Expect(t.Model.Nodes[0].PagesInUse).To(BeZero())
		Expect(t.Model.Devices[0].InFlight).To(BeZero())
		Expect(t.Server.Unclean).To(BeEquivalentTo(1))

		// The device serves the next worker as before.
		w2 := startWorker(sock, "hardware-only")
		defer w2.kill()
		Expect(w2.do("compress 65536").OK).To(BeTrue())
	})
})
