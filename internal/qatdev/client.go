package qatdev

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
	"unsafe"

	"github.com/savanna-sim/savanna/hw"
	"golang.org/x/sys/unix"
)

// Client is one process's connection to the device process. It
// implements hw.CompressService; its instances' devices implement
// hw.CompressDev (and hw.CompletionWaiter when the device's completion
// mode is thread). Its methods are safe for concurrent use: one request
// is on the socket at a time, so a WaitCompletion holds the others back
// for as long as it waits.
type Client struct {
	mu     sync.Mutex
	conn   *net.UnixConn
	mem    []byte
	pid    int
	thread bool
	meter  *hw.WallMeter
	err    error // the connection failed: every call fails with it

	bufs    map[uintptr]*hw.PinnedBuffer
	pending map[uint64]*hw.CompOp
	nextID  uint64
	devs    map[string]*clientDev
	stats   ClientStats
}

// ClientStats are the client's own counters.
type ClientStats struct {
	// Requests counts round trips; NotShared counts operations refused
	// at enqueue because a buffer was not in the memfd (not allocated
	// with AllocPinned).
	Requests  uint64
	NotShared uint64
	// Unmatched counts completions for no operation the client sent.
	Unmatched uint64
}

// Dial connects to the device process at socket and maps the memfd it
// hands over. The server knows the process by the connection's PID.
func Dial(socket string) (*Client, error) {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("qatdev: dial %s: %w", socket, err)
	}
	c := &Client{conn: conn, meter: hw.NewWallMeter(), bufs: map[uintptr]*hw.PinnedBuffer{},
		pending: map[uint64]*hw.CompOp{}, devs: map[string]*clientDev{}}
	b, err := frame(Request{Op: OpHello, Version: ProtocolVersion})
	if err == nil {
		_, err = conn.Write(b)
	}
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("qatdev: hello: %w", err)
	}
	var hdr [4]byte
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := conn.ReadMsgUnix(hdr[:], oob)
	if err == nil && n < len(hdr) {
		_, err = readFull(conn, hdr[n:])
	}
	var body []byte
	if err == nil {
		body, err = readBody(conn, hdr)
	}
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("qatdev: hello reply: %w", err)
	}
	resp, err := decodeResponse(body)
	if err == nil {
		err = resp.err("hello")
	}
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	fd, err := rightsFD(oob[:oobn])
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("qatdev: hello: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, int(resp.MemSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	_ = unix.Close(fd)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("qatdev: mmap the memfd of %d bytes: %w", resp.MemSize, err)
	}
	c.mem, c.pid, c.thread = mem, resp.PID, resp.Completion == "thread"
	return c, nil
}

func readFull(c *net.UnixConn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// rightsFD is the one descriptor of an SCM_RIGHTS message.
func rightsFD(oob []byte) (int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return -1, fmt.Errorf("control message: %w", err)
	}
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err == nil && len(fds) > 0 {
			for _, extra := range fds[1:] {
				_ = unix.Close(extra)
			}
			return fds[0], nil
		}
	}
	return -1, errors.New("no memfd in the server's reply")
}

// decodeResponse parses a response body.
func decodeResponse(body []byte) (Response, error) {
	var r Response
	if err := jsonUnmarshal(body, &r); err != nil {
		return Response{}, fmt.Errorf("qatdev: response: %w", err)
	}
	return r, nil
}

// err is the response's error, wrapping the hw error its kind names.
func (r Response) err(what string) error {
	if r.Error == "" {
		return nil
	}
	switch r.ErrorKind {
	case ErrKindNoInstance:
		return fmt.Errorf("qatdev: %s: %s: %w", what, r.Error, hw.ErrNoInstance)
	case ErrKindNoPinnedMemory:
		return fmt.Errorf("qatdev: %s: %s: %w", what, r.Error, hw.ErrNoPinnedMemory)
	case ErrKindDeviceDown:
		return fmt.Errorf("qatdev: %s: %s: %w", what, r.Error, hw.ErrDeviceDown)
	}
	return fmt.Errorf("qatdev: %s: %s (%s)", what, r.Error, r.ErrorKind)
}

// PID is the process as the server knows it (the kernel's view of the
// connection's peer).
func (c *Client) PID() hw.ProcessID { return hw.ProcessID(c.pid) }

// Meter is the client's meter for the shim: an hw.WallMeter, whose Now
// is the wall clock since Dial. It charges only what the
// process's own code charges (the shim's copies, software compression,
// polls it counts); the device's work and the driver's syscalls are
// counted by the server, in its telemetry, not here. Idle records the
// time without sleeping, as real time passes by itself. It is for one
// goroutine: the shim's process.
func (c *Client) Meter() *hw.WallMeter { return c.meter }

// Stats returns the client's counters.
func (c *Client) Stats() ClientStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// call makes one round trip.
func (c *Client) call(r Request) (Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.callLocked(r)
}

func (c *Client) callLocked(r Request) (Response, error) {
	if c.err != nil {
		return Response{}, c.err
	}
	fail := func(err error) (Response, error) {
		c.err = fmt.Errorf("qatdev: connection to the device process: %w", err)
		return Response{}, c.err
	}
	b, err := frame(r)
	if err != nil {
		return Response{}, err
	}
	if _, err := c.conn.Write(b); err != nil {
		return fail(err)
	}
	body, err := readFrame(c.conn)
	if err != nil {
		return fail(err)
	}
	c.stats.Requests++
	resp, err := decodeResponse(body)
	if err != nil {
		return fail(err)
	}
	return resp, resp.err(string(r.Op))
}

// Close says exit (the process is done: what it still holds is counted
// as leaked), closes the connection and unmaps the memfd. Pinned buffers
// must not be used after.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil
	}
	if c.err == nil {
		_, _ = c.callLocked(Request{Op: OpExit})
	}
	err := c.conn.Close()
	c.conn = nil
	c.err = errors.New("qatdev: client closed")
	if c.mem != nil {
		_ = unix.Munmap(c.mem)
		c.mem = nil
	}
	return err
}

// Attach implements hw.CompressService. pid is ignored: the server
// accounts the instance to the connection's process.
func (c *Client) Attach(pid hw.ProcessID, node int) (hw.CompressInstance, error) {
	resp, err := c.call(Request{Op: OpAttach, Node: node})
	if err != nil {
		return nil, err
	}
	wi := resp.Instance
	if wi == nil {
		return nil, fmt.Errorf("qatdev: attach: reply without an instance")
	}
	c.mu.Lock()
	d := c.devs[wi.Device]
	if d == nil {
		d = &clientDev{c: c, name: wi.Device}
		c.devs[wi.Device] = d
	}
	c.mu.Unlock()
	return &clientInstance{dev: d, qp: wi.QP, node: wi.Node, name: wi.Name}, nil
}

// Detach implements hw.CompressService.
func (c *Client) Detach(pid hw.ProcessID, ci hw.CompressInstance) error {
	inst, ok := ci.(*clientInstance)
	if !ok || inst == nil || inst.dev.c != c {
		return fmt.Errorf("qatdev: detach: %T is not an instance of this client", ci)
	}
	_, err := c.call(Request{Op: OpDetach, Device: inst.dev.name, QP: inst.qp})
	return err
}

// AllocPinned implements hw.CompressService: the buffer is a region of
// the memfd the server shares with the process.
func (c *Client) AllocPinned(pid hw.ProcessID, size int, node int) (*hw.PinnedBuffer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp, err := c.callLocked(Request{Op: OpAlloc, Size: size, Node: node})
	if err != nil {
		return nil, err
	}
	wb := resp.Buffer
	if wb == nil || !inRange(wb.Off, wb.Len, int64(len(c.mem))) {
		return nil, fmt.Errorf("qatdev: alloc: reply with a buffer outside the memfd: %w", hw.ErrNoPinnedMemory)
	}
	b := &hw.PinnedBuffer{Bytes: c.mem[wb.Off : wb.Off+wb.Len : wb.Off+wb.Len], Node: wb.Node, IOVA: wb.IOVA,
		Owner: hw.ProcessID(c.pid), Handle: uintptr(wb.Handle)}
	c.bufs[b.Handle] = b
	return b, nil
}

// FreePinned implements hw.CompressService.
func (c *Client) FreePinned(buf *hw.PinnedBuffer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if buf == nil || c.bufs[buf.Handle] != buf {
		return fmt.Errorf("qatdev: free of a pinned buffer this client did not allocate")
	}
	delete(c.bufs, buf.Handle)
	_, err := c.callLocked(Request{Op: OpFree, Handle: uint64(buf.Handle)})
	return err
}

// Exit implements hw.CompressService: the server takes back what the
// process holds and counts it as leaked. The connection stays open.
func (c *Client) Exit(pid hw.ProcessID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.callLocked(Request{Op: OpExit})
	clear(c.bufs)
	clear(c.pending)
}

// offset is where b lies in the memfd, if it does.
func (c *Client) offset(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	if len(c.mem) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(c.mem)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < base {
		return 0, false
	}
	off := int64(p - base)
	return off, inRange(off, int64(len(b)), int64(len(c.mem)))
}

// clientInstance is an instance held through the client.
type clientInstance struct {
	dev  *clientDev
	qp   int
	node int
	name string
}

// Device implements hw.CompressInstance.
func (i *clientInstance) Device() hw.CompressDev {
	if i.dev.c.thread {
		return waitingDev{i.dev}
	}
	return i.dev
}

// QueuePair implements hw.CompressInstance.
func (i *clientInstance) QueuePair() int { return i.qp }

// NUMANode implements hw.CompressInstance.
func (i *clientInstance) NUMANode() int { return i.node }

// Name implements hw.CompressInstance.
func (i *clientInstance) Name() string { return i.name }

// clientDev is a device of the server, as hw.CompressDev.
type clientDev struct {
	c    *Client
	name string
	caps *hw.CompressCapabilities
}

// waitingDev adds hw.CompletionWaiter for thread completion mode.
type waitingDev struct{ *clientDev }

// WaitCompletion implements hw.CompletionWaiter: the server blocks the
// request until qp has a completion or timeout passes.
func (d waitingDev) WaitCompletion(qp int, timeout time.Duration) bool {
	resp, err := d.c.call(Request{Op: OpWait, Device: d.name, QP: qp, Timeout: timeout})
	return err == nil && resp.Ready
}

// Capabilities implements hw.CompressDev: the device's, with the flags
// of what the model computes (as sim/qat's Device reports them).
func (d *clientDev) Capabilities() hw.CompressCapabilities {
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	if d.caps == nil {
		caps := hw.CompressCapabilities{Stateful: true, FixedHuffman: true, DynamicHuffman: true, CRC32: true,
			Adler32: true, MinWindowLog: 8, MaxWindowLog: 15, MaxLevel: 9}
		if resp, err := d.c.callLocked(Request{Op: OpDevInfo, Device: d.name}); err == nil && resp.DevInfo != nil {
			caps.DriverName, caps.NUMANode, caps.MaxQueuePairs = resp.DevInfo.DriverName, resp.DevInfo.NUMANode, resp.DevInfo.MaxQueuePairs
		}
		d.caps = &caps
	}
	return *d.caps
}

// Stats implements hw.CompressDev.
func (d *clientDev) Stats() hw.CompressStats {
	resp, err := d.c.call(Request{Op: OpDevInfo, Device: d.name})
	if err != nil || resp.DevInfo == nil {
		return hw.CompressStats{}
	}
	i := resp.DevInfo
	return hw.CompressStats{EnqueuedCount: i.EnqueuedCount, DequeuedCount: i.DequeuedCount,
		EnqueueErrCount: i.EnqueueErrCount, DequeueErrCount: i.DequeueErrCount}
}

// EnqueueBurst implements hw.CompressDev. Every buffer must be in the
// memfd (a pinned buffer of this client); the first op that is not, and
// those after it, are not taken.
func (d *clientDev) EnqueueBurst(qp int, ops []*hw.CompOp) int {
	c := d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	wire := make([]WireOp, 0, min(len(ops), MaxBurst))
	ids := make([]uint64, 0, cap(wire))
	for _, op := range ops[:min(len(ops), MaxBurst)] {
		if op == nil {
			break
		}
		so, sok := c.offset(op.Src)
		do, dok := c.offset(op.Dst)
		if !sok || !dok {
			c.stats.NotShared++
			break
		}
		c.nextID++
		wire = append(wire, WireOp{ID: c.nextID, Type: int(op.Type), Kind: int(op.Xform.Kind), Algo: int(op.Xform.Algo),
			Level: op.Xform.Level, Huffman: int(op.Xform.Huffman), Checksum: int(op.Xform.Checksum),
			WindowLog: op.Xform.WindowLog, Flush: int(op.Flush),
			SrcOff: so, SrcLen: int64(len(op.Src)), DstOff: do, DstLen: int64(len(op.Dst)), InputChecksum: op.InputChecksum})
		ids = append(ids, c.nextID)
	}
	if len(wire) == 0 {
		return 0
	}
	resp, err := c.callLocked(Request{Op: OpEnqueue, Device: d.name, QP: qp, Ops: wire})
	if err != nil {
		return 0
	}
	taken := min(resp.Taken, len(wire))
	for i := range taken {
		c.pending[ids[i]] = ops[i]
	}
	return taken
}

// DequeueBurst implements hw.CompressDev.
func (d *clientDev) DequeueBurst(qp int, ops []*hw.CompOp) int {
	c := d.c
	if len(ops) == 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	resp, err := c.callLocked(Request{Op: OpDequeue, Device: d.name, QP: qp, Max: min(len(ops), MaxBurst)})
	if err != nil {
		return 0
	}
	n := 0
	for _, w := range resp.Done {
		op := c.pending[w.ID]
		if op == nil || n == len(ops) {
			c.stats.Unmatched++
			continue
		}
		delete(c.pending, w.ID)
		op.Status, op.Consumed, op.Produced, op.Checksum, op.Debug = hw.OpStatus(w.Status), w.Consumed, w.Produced, w.Checksum, w.Debug
		ops[n] = op
		n++
	}
	return n
}

var (
	_ hw.CompressService  = (*Client)(nil)
	_ hw.CompressDev      = (*clientDev)(nil)
	_ hw.CompletionWaiter = waitingDev{}
)
