package qatdev

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
	"golang.org/x/sys/unix"
)

// conn is one connection: a process once it said hello, or a control
// client (simrun qat stats/fault/clear) that never does.
type conn struct {
	s     *Server
	c     *net.UnixConn
	pid   int
	hello bool
	// exited says the process sent exit: its close is clean.
	exited bool
	mem    *sharedMem
	bufs   map[uint64]*srvBuf
	insts  map[instKey]*qat.Instance
}

// srvBuf is a pinned buffer: the model's record and its memfd region.
type srvBuf struct {
	pb     *hw.PinnedBuffer
	off, n int64
}

// requestError is a refusal with the kind the client maps to an hw error.
type requestError struct {
	kind string
	err  error
}

func (e *requestError) Error() string { return e.err.Error() }

func bad(format string, a ...any) error {
	return &requestError{kind: ErrKindBadRequest, err: fmt.Errorf(format, a...)}
}

// serviceError classifies an error of the model by the hw error it wraps.
func serviceError(err error) error {
	kind := ErrKindFailed
	switch {
	case errors.Is(err, hw.ErrNoInstance):
		kind = ErrKindNoInstance
	case errors.Is(err, hw.ErrNoPinnedMemory):
		kind = ErrKindNoPinnedMemory
	case errors.Is(err, hw.ErrDeviceDown):
		kind = ErrKindDeviceDown
	}
	return &requestError{kind: kind, err: err}
}

// serve reads requests until the connection closes, then takes back what
// the process held.
func (c *conn) serve() {
	defer c.s.wg.Done()
	defer c.close()
	for {
		body, err := readFrame(c.c)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrUnexpectedEOF) {
				// A frame too large or cut short: say so, then drop the
				// connection, since the stream cannot be resynchronised.
				c.s.countBad(err)
				_ = c.reply(Response{Error: err.Error(), ErrorKind: ErrKindBadRequest}, nil)
			}
			return
		}
		req, err := DecodeRequest(body)
		if err != nil {
			c.s.countBad(err)
			if c.reply(Response{Error: err.Error(), ErrorKind: ErrKindBadRequest}, nil) != nil {
				return
			}
			continue
		}
		var resp Response
		var rights []byte
		if req.Op == OpWait {
			resp, err = c.wait(req)
		} else {
			resp, rights, err = c.handleLocked(req)
		}
		if err != nil {
			resp = Response{Error: err.Error(), ErrorKind: ErrKindFailed}
			var re *requestError
			if errors.As(err, &re) {
				resp.ErrorKind = re.kind
				if re.kind == ErrKindBadRequest {
					c.s.countBad(err)
				}
			}
		}
		if c.reply(resp, rights) != nil {
			return
		}
	}
}

// countBad counts a malformed request.
func (s *Server) countBad(err error) {
	s.mu.Lock()
	s.counters.BadRequests++
	s.counters.LastBadRequest = err.Error()
	s.mu.Unlock()
}

// reply writes a response, with a descriptor in control data if rights
// is set.
func (c *conn) reply(r Response, rights []byte) error {
	b, err := frame(r)
	if err != nil {
		b, _ = frame(Response{Error: err.Error(), ErrorKind: ErrKindFailed})
	}
	if rights != nil {
		_, _, err = c.c.WriteMsgUnix(b, rights, nil)
		return err
	}
	_, err = c.c.Write(b)
	return err
}

// close ends the process at the model: its instances and pinned memory
// are taken back and what it still held is counted as leaked.
func (c *conn) close() {
	_ = c.c.Close()
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if !c.hello {
		return
	}
	s.counters.Disconnects++
	if !c.exited {
		s.counters.Unclean++
	}
	c.exit()
	if s.byPID[c.pid] == c {
		delete(s.byPID, c.pid)
	}
	c.mem.close()
}

// exit calls the model's Exit for the process and forgets its holdings
// (lock held).
func (c *conn) exit() {
	s := c.s
	before := s.svc.ProcessStats(hw.ProcessID(c.pid)).Leaked
	s.svc.Exit(hw.ProcessID(c.pid))
	if after := s.svc.ProcessStats(hw.ProcessID(c.pid)).Leaked; after.Buffers > before.Buffers || after.Pages > before.Pages {
		s.counters.ExitsWithLeaks++
	}
	for h, b := range c.bufs {
		c.mem.alloc.put(b.off, b.n)
		delete(c.bufs, h)
	}
	clear(c.insts)
}

// handleLocked serves one request under the server's lock. A panic in
// the model (a bug) is the request's error, counted, not the server's
// end: the lock is released and the connection goes on.
func (c *conn) handleLocked(r Request) (resp Response, rights []byte, err error) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			s.counters.Panics++
			resp, rights, err = Response{}, nil, fmt.Errorf("%s: internal error: %v", r.Op, p)
		}
	}()
	s.counters.Requests++
	return c.handle(r)
}

// handle serves one request (lock held). rights is a control message to
// send with the response.
func (c *conn) handle(r Request) (Response, []byte, error) {
	s := c.s
	switch r.Op {
	case OpStats:
		t := s.telemetryLocked()
		return Response{Telemetry: &t}, nil, nil
	case OpFault, OpClear:
		return Response{}, nil, c.fault(r)
	case OpHello:
		return c.helloLocked(r)
	}
	if !c.hello {
		return Response{}, nil, bad("%s before hello", r.Op)
	}
	pid := hw.ProcessID(c.pid)
	switch r.Op {
	case OpAttach:
		ci, err := s.svc.Attach(pid, r.Node)
		if err != nil {
			return Response{}, nil, serviceError(err)
		}
		inst := ci.(*qat.Instance)
		k := instKey{inst.QATDevice().Name(), inst.QueuePair()}
		c.insts[k] = inst
		return Response{Instance: &WireInstance{Device: k.dev, QP: k.qp, Node: inst.NUMANode(), Name: inst.Name()}}, nil, nil
	case OpDetach:
		k := instKey{r.Device, r.QP}
		inst := c.insts[k]
		if inst == nil {
			return Response{}, nil, bad("detach %s qp %d: not an instance this process holds", r.Device, r.QP)
		}
		delete(c.insts, k)
		if err := s.svc.Detach(pid, inst); err != nil {
			return Response{}, nil, serviceError(err)
		}
		return Response{}, nil, nil
	case OpAlloc:
		return c.alloc(r)
	case OpFree:
		b := c.bufs[r.Handle]
		if b == nil {
			return Response{}, nil, bad("free of pinned buffer %#x: not allocated by this process or already freed", r.Handle)
		}
		delete(c.bufs, r.Handle)
		c.mem.alloc.put(b.off, b.n)
		if err := s.svc.FreePinned(b.pb); err != nil {
			return Response{}, nil, serviceError(err)
		}
		return Response{}, nil, nil
	case OpEnqueue:
		return c.enqueue(r)
	case OpDequeue:
		return c.dequeue(r)
	case OpWait:
		return c.peek(r)
	case OpDevInfo:
		d, err := s.device(r.Device)
		if err != nil {
			return Response{}, nil, bad("devinfo: %v", err)
		}
		caps, st := d.Capabilities(), d.Stats()
		return Response{DevInfo: &WireDevInfo{DriverName: caps.DriverName, NUMANode: caps.NUMANode, MaxQueuePairs: caps.MaxQueuePairs,
			EnqueuedCount: st.EnqueuedCount, DequeuedCount: st.DequeuedCount,
			EnqueueErrCount: st.EnqueueErrCount, DequeueErrCount: st.DequeueErrCount}}, nil, nil
	case OpExit:
		c.exit()
		c.exited = true
		return Response{}, nil, nil
	}
	return Response{}, nil, bad("op %q not served", r.Op)
}

// helloLocked gives the process its memfd.
func (c *conn) helloLocked(r Request) (Response, []byte, error) {
	s := c.s
	switch {
	case r.Version != ProtocolVersion:
		return Response{}, nil, bad("hello: protocol version %d, the server speaks %d", r.Version, ProtocolVersion)
	case c.hello:
		return Response{}, nil, bad("hello: already said")
	case s.byPID[c.pid] != nil:
		s.counters.RefusedPIDs++
		return Response{}, nil, &requestError{kind: ErrKindFailed,
			err: fmt.Errorf("hello: pid %d already has a connection (one per process)", c.pid)}
	}
	mem, err := newSharedMem(fmt.Sprintf("qatdev-usdm-%d", c.pid), s.memSize)
	if err != nil {
		return Response{}, nil, fmt.Errorf("hello: %w", err)
	}
	c.mem, c.hello = mem, true
	s.byPID[c.pid] = c
	s.counters.Processes++
	if _, ok := s.procs[c.pid]; !ok {
		s.procs[c.pid] = &work{}
		s.pidSeen = append(s.pidSeen, c.pid)
	}
	return Response{PID: c.pid, MemSize: s.memSize, Completion: string(s.mode)}, unix.UnixRights(mem.fd), nil
}

// alloc takes a pinned buffer from the model and its bytes from the memfd.
func (c *conn) alloc(r Request) (Response, []byte, error) {
	s := c.s
	pb, err := s.svc.AllocPinned(hw.ProcessID(c.pid), r.Size, r.Node)
	if err != nil {
		return Response{}, nil, serviceError(err)
	}
	off, ok := c.mem.alloc.get(int64(r.Size))
	if !ok {
		_ = s.svc.FreePinned(pb)
		s.counters.MemfdFull++
		return Response{}, nil, &requestError{kind: ErrKindNoPinnedMemory,
			err: fmt.Errorf("alloc %d bytes: the process's memfd of %d bytes has no room: %w", r.Size, s.memSize, hw.ErrNoPinnedMemory)}
	}
	h := uint64(pb.Handle)
	c.bufs[h] = &srvBuf{pb: pb, off: off, n: int64(r.Size)}
	return Response{Buffer: &WireBuffer{Handle: h, Off: off, Len: int64(r.Size), Node: pb.Node, IOVA: pb.IOVA}}, nil, nil
}

// instance finds an instance the process holds.
func (c *conn) instance(dev string, qp int) (*qat.Instance, instKey, error) {
	k := instKey{dev, qp}
	inst := c.insts[k]
	if inst == nil {
		return nil, k, bad("%s qp %d: not an instance this process holds", dev, qp)
	}
	return inst, k, nil
}

// enqueue submits operations whose buffers are regions of the memfd.
func (c *conn) enqueue(r Request) (Response, []byte, error) {
	inst, k, err := c.instance(r.Device, r.QP)
	if err != nil {
		return Response{}, nil, err
	}
	size := int64(len(c.mem.bytes))
	ops := make([]*hw.CompOp, len(r.Ops))
	for i, w := range r.Ops {
		if !inRange(w.SrcOff, w.SrcLen, size) || !inRange(w.DstOff, w.DstLen, size) {
			return Response{}, nil, bad("enqueue: ops[%d]: src [%d,+%d) or dst [%d,+%d) outside the memfd of %d bytes",
				i, w.SrcOff, w.SrcLen, w.DstOff, w.DstLen, size)
		}
		ops[i] = &hw.CompOp{
			Type: hw.OpType(w.Type), Flush: hw.FlushFlag(w.Flush),
			Xform: hw.Xform{Kind: hw.XformKind(w.Kind), Algo: hw.CompressAlgo(w.Algo), Level: w.Level,
				Huffman: hw.Huffman(w.Huffman), Checksum: hw.ChecksumType(w.Checksum), WindowLog: w.WindowLog},
			Src:           c.mem.bytes[w.SrcOff : w.SrcOff+w.SrcLen : w.SrcOff+w.SrcLen],
			Dst:           c.mem.bytes[w.DstOff : w.DstOff+w.DstLen : w.DstOff+w.DstLen],
			InputChecksum: w.InputChecksum, UserData: w.ID,
		}
	}
	d := inst.QATDevice()
	taken := d.EnqueueBurst(k.qp, ops)
	wi, wp := c.s.workOf(k, c.pid)
	for _, op := range ops[:taken] {
		n, decomp := op.Consumed, op.Xform.Kind == hw.XformDecompress
		if decomp {
			n = op.Produced
		}
		for _, w := range []*work{wi, wp} {
			w.requests++
			w.bytesIn += uint64(op.Consumed)
			w.bytesOut += uint64(op.Produced)
			w.busy += d.ServiceTime(n, decomp)
		}
	}
	return Response{Taken: taken}, nil, nil
}

// dequeue returns completed operations.
func (c *conn) dequeue(r Request) (Response, []byte, error) {
	inst, k, err := c.instance(r.Device, r.QP)
	if err != nil {
		return Response{}, nil, err
	}
	max := r.Max
	if max == 0 {
		max = 32
	}
	ops := make([]*hw.CompOp, max)
	n := inst.QATDevice().DequeueBurst(k.qp, ops)
	wi, wp := c.s.workOf(k, c.pid)
	done := make([]WireDone, 0, n)
	for _, op := range ops[:n] {
		if op.Status != hw.StatusSuccess {
			wi.errors++
			wp.errors++
		}
		done = append(done, WireDone{ID: op.UserData, Status: int(op.Status), Consumed: op.Consumed,
			Produced: op.Produced, Checksum: op.Checksum, Debug: op.Debug})
	}
	return Response{Done: done}, nil, nil
}

// waitStep is how often a wait looks at the response ring again. The
// model knows each request's completion time, but a hang or a fault can
// change it while the caller waits, so the wait polls (in the server,
// sparing the socket a round trip per poll).
const waitStep = 20 * time.Microsecond

// wait blocks, without the lock, until the instance has a completion to
// dequeue or the timeout passes (the driver's completion thread waking
// the process in thread mode).
func (c *conn) wait(r Request) (Response, error) {
	deadline := time.Now().Add(r.Timeout)
	for {
		var ready bool
		resp, _, err := c.handleLocked(Request{Op: OpWait, Device: r.Device, QP: r.QP})
		if err == nil {
			ready = resp.Ready
		}
		left := time.Until(deadline)
		if err != nil || ready || left <= 0 {
			c.s.mu.Lock()
			c.s.counters.Waits++
			if err == nil && !ready {
				c.s.counters.WaitTimeouts++
			}
			c.s.mu.Unlock()
			return resp, err
		}
		time.Sleep(min(waitStep, left))
	}
}

// peek is one look of a wait: whether the instance has a completion to
// dequeue (lock held).
func (c *conn) peek(r Request) (Response, []byte, error) {
	inst, k, err := c.instance(r.Device, r.QP)
	if err != nil {
		return Response{}, nil, err
	}
	return Response{Ready: inst.QATDevice().WaitCompletion(k.qp, 0)}, nil, nil
}

// fault injects or clears a fault on one device ("" = every device).
func (c *conn) fault(r Request) error {
	s := c.s
	kinds := []qat.FaultKind{qat.FaultKind(r.Kind)}
	if r.Op == OpClear && r.Kind == "" {
		kinds = qat.FaultKinds() // clear: every kind
	}
	for _, k := range kinds {
		if err := k.Validate(); err != nil {
			return bad("%s: %v", r.Op, err)
		}
	}
	devs := s.svc.Devices()
	if r.Device != "" {
		d, err := s.svc.Device(r.Device)
		if err != nil {
			return bad("%s: %v", r.Op, err)
		}
		devs = []*qat.Device{d}
	}
	for _, d := range devs {
		for _, kind := range kinds {
			var err error
			if r.Op == OpFault {
				err = d.InjectFault(kind, qat.FaultParams{Rate: r.Rate, Instances: r.Instances, Delay: r.Delay})
			} else {
				err = d.Clear(kind)
			}
			if err != nil {
				return bad("%v", err)
			}
		}
	}
	if r.Op == OpFault {
		s.counters.FaultsInjected++
	} else {
		s.counters.FaultsCleared++
	}
	return nil
}
