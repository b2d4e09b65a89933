package qatdev_test

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"net"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/savanna-sim/savanna/internal/qatdev"
	"github.com/savanna-sim/savanna/sim/qat"
)

// raw is a connection that speaks the framing by hand.
type raw struct{ c net.Conn }

func (r raw) send(body []byte) {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
	_, err := r.c.Write(append(hdr[:], body...))
	Expect(err).NotTo(HaveOccurred())
}

func (r raw) recv() (qatdev.Response, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r.c, hdr[:]); err != nil {
		return qatdev.Response{}, err
	}
	b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(r.c, b); err != nil {
		return qatdev.Response{}, err
	}
	var resp qatdev.Response
	Expect(json.Unmarshal(b, &resp)).To(Succeed())
	return resp, nil
}

func (r raw) call(req qatdev.Request) qatdev.Response {
	b, err := json.Marshal(req)
	Expect(err).NotTo(HaveOccurred())
	r.send(b)
	resp, err := r.recv()
	Expect(err).NotTo(HaveOccurred())
	return resp
}

var _ = Describe("bad requests on the socket", func() {
	It("get a clear error and never bring the server down", func() {
		srv, sock := serve(qat.DeviceConfig{Model: "c62x", Instances: 6})
		c, err := net.Dial("unix", sock)
		Expect(err).NotTo(HaveOccurred())
		r := raw{c}

		r.send([]byte("\x00\xffgarbage"))
		resp, err := r.recv()
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.ErrorKind).To(Equal(qatdev.ErrKindBadRequest))
		Expect(resp.Error).To(ContainSubstring("qatdev: request"))

		resp = r.call(qatdev.Request{Op: "reboot"})
		Expect(resp.ErrorKind).To(Equal(qatdev.ErrKindBadRequest))
		Expect(resp.Error).To(ContainSubstring("op: unknown"))

		r.send([]byte(`{"op":"attach","owner":"root"}`))
		resp, _ = r.recv()
		Expect(resp.Error).To(ContainSubstring(`unknown field "owner"`))

		resp = r.call(qatdev.Request{Op: qatdev.OpAttach})
		Expect(resp.Error).To(ContainSubstring("attach before hello"))

		resp = r.call(qatdev.Request{Op: qatdev.OpHello, Version: 99})
		Expect(resp.Error).To(ContainSubstring("protocol version 99"))

		resp = r.call(qatdev.Request{Op: qatdev.OpHello, Version: qatdev.ProtocolVersion})
		Expect(resp.Error).To(BeEmpty())
		size := resp.MemSize
		resp = r.call(qatdev.Request{Op: qatdev.OpAttach})
		Expect(resp.Error).To(BeEmpty())
		inst := resp.Instance

		resp = r.call(qatdev.Request{Op: qatdev.OpEnqueue, Device: inst.Device, QP: inst.QP,
			Ops: []qatdev.WireOp{{ID: 1, Kind: 0, Algo: 1, Level: 6, SrcOff: size - 10, SrcLen: 4096, DstOff: 0, DstLen: 4096}}})
		Expect(resp.ErrorKind).To(Equal(qatdev.ErrKindBadRequest))
		Expect(resp.Error).To(ContainSubstring("outside the memfd"))

		resp = r.call(qatdev.Request{Op: qatdev.OpEnqueue, Device: inst.Device, QP: inst.QP,
			Ops: []qatdev.WireOp{{ID: 1, SrcOff: -1, SrcLen: 1}}})
		Expect(resp.Error).To(ContainSubstring("negative"))

		resp = r.call(qatdev.Request{Op: qatdev.OpDequeue, Device: inst.Device, QP: inst.QP + 1})
		Expect(resp.Error).To(ContainSubstring("not an instance this process holds"))

		resp = r.call(qatdev.Request{Op: qatdev.OpFree, Handle: 12345})
		Expect(resp.Error).To(ContainSubstring("not allocated by this process"))

		resp = r.call(qatdev.Request{Op: qatdev.OpFault, Kind: "meteor"})
		Expect(resp.Error).To(ContainSubstring("meteor"))

		// An op the device cannot do is the device's answer, not the
		// server's: it completes with an error status.
		resp = r.call(qatdev.Request{Op: qatdev.OpAlloc, Size: 8192})
		Expect(resp.Error).To(BeEmpty())
		buf := resp.Buffer
		resp = r.call(qatdev.Request{Op: qatdev.OpEnqueue, Device: inst.Device, QP: inst.QP,
			Ops: []qatdev.WireOp{{ID: 7, Type: 1, Kind: 0, Algo: 1, Level: 6, Flush: 3,
				SrcOff: buf.Off, SrcLen: 4096, DstOff: buf.Off + 4096, DstLen: 4096}}})
		Expect(resp.Error).To(BeEmpty())
		Expect(resp.Taken).To(Equal(1))
		Eventually(func() []qatdev.WireDone {
			return r.call(qatdev.Request{Op: qatdev.OpDequeue, Device: inst.Device, QP: inst.QP}).Done
		}).Should(ContainElement(HaveField("Status", BeNumerically("==", 2)))) // invalid-args: stateful compression

		// A frame larger than the protocol allows ends the connection,
		// with a reason.
		_, err = c.Write([]byte{0xff, 0xff, 0xff, 0xff})
		Expect(err).NotTo(HaveOccurred())
		resp, err = r.recv()
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Error).To(ContainSubstring("larger than the protocol allows"))
		_, err = r.recv()
		Expect(err).To(HaveOccurred())
		_ = c.Close()

		Eventually(func() int { return srv.Telemetry().Server.Active }).Should(BeZero())
		t := srv.Telemetry()
		Expect(t.Server.BadRequests).To(BeNumerically(">=", 10))
		Expect(t.Server.Panics).To(BeZero())
		Expect(t.Model.InstancesInUse).To(BeZero())
		Expect(t.Model.Leaked.Buffers).To(BeEquivalentTo(1))

		w := startWorker(sock, "hardware-only")
		defer w.kill()
		Expect(w.do("compress 65536").OK).To(BeTrue())
	})
})

var _ = Describe("faults injected while it runs", func() {
	It("engine errors send a failover worker to software, counted, until cleared", func() {
		srv, sock := serve(qat.DeviceConfig{Model: "c62x", Instances: 6})
		w := startWorker(sock, "failover")
		defer w.kill()
		Expect(qatdev.InjectFault(sock, qatdev.Fault{Kind: "engine_error", Rate: 1})).To(Succeed())
		r := w.do("compress 131072")
		Expect(r.OK).To(BeTrue(), r.Err)
		Expect(r.Shim.Fallbacks.EngineError).To(BeNumerically(">", 0))
		Expect(r.Shim.HWRequests).To(BeZero())
		t := srv.Telemetry()
		Expect(t.Model.Devices[0].Errors.Engine).To(BeNumerically(">", 0))
		Expect(proc(t, w.ready.PID).Errors).To(BeNumerically(">", 0))
		Expect(t.Server.FaultsInjected).To(BeEquivalentTo(1))

		Expect(qatdev.ClearFault(sock, "", "")).To(Succeed())
		r = w.do("compress 131072")
		Expect(r.OK).To(BeTrue(), r.Err)
		Expect(r.Shim.HWRequests).To(BeNumerically(">", 0))
	})

	It("instance exhaustion and USDM exhaustion refuse attaches and allocations", func() {
		_, sock := serve(qat.DeviceConfig{Model: "c62x", Instances: 6})
		Expect(qatdev.InjectFault(sock, qatdev.Fault{Kind: "instance_exhaustion"})).To(Succeed())
		w := startWorker(sock, "failover")
		defer w.kill()
		Expect(w.ready.Shim.Fallbacks.NoInstance).To(BeEquivalentTo(1))
		Expect(qatdev.ClearFault(sock, "", "instance_exhaustion")).To(Succeed())
		Expect(qatdev.InjectFault(sock, qatdev.Fault{Kind: "usdm_exhaustion"})).To(Succeed())
		r := w.do("compress 131072")
		Expect(r.OK).To(BeTrue(), r.Err)
		Expect(r.Shim.Fallbacks.NoPinnedMemory).To(BeNumerically(">", 0))
		t, err := qatdev.QueryStats(sock)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Model.PinnedAllocFailures).To(BeNumerically(">", 0))
	})

	It("a hang times requests out in real time; a reset refuses work for its delay", func() {
		_, sock := serve(qat.DeviceConfig{Model: "c62x", Instances: 6})
		w := startWorker(sock, "failover")
		defer w.kill()
		Expect(qatdev.InjectFault(sock, qatdev.Fault{Kind: "hang"})).To(Succeed())
		r := w.do("compress 65536")
		Expect(r.OK).To(BeTrue(), r.Err)
		Expect(r.Shim.Fallbacks.Timeout).To(BeNumerically(">", 0))
		Expect(qatdev.ClearFault(sock, "", "hang")).To(Succeed())
		t, err := qatdev.QueryStats(sock)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Model.Devices[0].HungRequests).To(BeNumerically(">", 0))

		Expect(qatdev.InjectFault(sock, qatdev.Fault{Kind: "reset", Delay: 1 << 40})).To(Succeed())
		r = w.do("compress 65536")
		Expect(r.OK).To(BeTrue(), r.Err)
		Expect(r.Shim.Fallbacks.DeviceDown).To(BeNumerically(">", 0))
		t, err = qatdev.QueryStats(sock)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Model.Devices[0].Resets).To(BeEquivalentTo(1))
	})

	It("thread completion mode: the worker waits on the server instead of polling", func() {
		srv, sock := serve(qat.DeviceConfig{Model: "4xxx", Instances: 6, Completion: qat.Thread})
		w := startWorker(sock, "hardware-only", childThread+"=1")
		defer w.kill()
		r := w.do("compress 262144")
		Expect(r.OK).To(BeTrue(), r.Err)
		Expect(r.Shim.HWRequests).To(BeNumerically(">=", 4))
		Expect(r.Shim.Waits).To(BeNumerically(">=", r.Shim.HWRequests), "a wait per request at least")
		Expect(srv.Telemetry().Server.Waits).To(Equal(r.Shim.Waits))
		Expect(proc(srv.Telemetry(), w.ready.PID).BytesIn).To(BeEquivalentTo(262144))
	})
})
