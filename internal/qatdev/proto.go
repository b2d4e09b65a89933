package qatdev

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// ProtocolVersion is the version a client says at hello; the server
// refuses another.
const ProtocolVersion = 1

// MaxFrame bounds one message: a frame announcing more is refused before
// anything is read or allocated for it.
const MaxFrame = 1 << 20

// MaxBurst bounds the operations of one enqueue or dequeue request (the
// shim submits one at a time; DPDK's bursts are commonly 32 or 64).
const MaxBurst = 256

// Op names a request.
type Op string

// Requests. Process requests act on the connection's process; control
// requests (fault, clear, stats) act on the device and may come from any
// connection, with or without hello.
const (
	OpHello   Op = "hello"   // map the memfd; replies with it (SCM_RIGHTS)
	OpAttach  Op = "attach"  // cpaDcGetInstances + cpaDcStartInstance
	OpDetach  Op = "detach"  // cpaDcStopInstance
	OpAlloc   Op = "alloc"   // qaeMemAllocNUMA
	OpFree    Op = "free"    // qaeMemFreeNUMA
	OpEnqueue Op = "enqueue" // rte_compressdev_enqueue_burst
	OpDequeue Op = "dequeue" // rte_compressdev_dequeue_burst
	OpWait    Op = "wait"    // the driver's completion thread (thread mode)
	OpDevInfo Op = "devinfo" // rte_compressdev_info_get + stats_get
	OpExit    Op = "exit"    // icp_sal_userStop: the process is done
	OpStats   Op = "stats"   // telemetry
	OpFault   Op = "fault"   // inject a fault
	OpClear   Op = "clear"   // clear a fault
)

// ops lists the known requests.
var ops = []Op{OpHello, OpAttach, OpDetach, OpAlloc, OpFree, OpEnqueue, OpDequeue, OpWait, OpDevInfo, OpExit, OpStats, OpFault, OpClear}

// Request is one message from a client. Fields not used by Op are zero.
type Request struct {
	Op      Op     `json:"op"`
	Version int    `json:"version,omitempty"`
	Device  string `json:"device,omitempty"`
	QP      int    `json:"qp,omitempty"`
	Node    int    `json:"node,omitempty"`
	Size    int    `json:"size,omitempty"`
	Handle  uint64 `json:"handle,omitempty"`
	// Ops are an enqueue's operations.
	Ops []WireOp `json:"ops,omitempty"`
	// Max is how many completions a dequeue takes at most.
	Max int `json:"max,omitempty"`
	// Timeout is how long a wait may block.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Kind, Rate, Instances and Delay are a fault's.
	Kind      string        `json:"kind,omitempty"`
	Rate      float64       `json:"rate,omitempty"`
	Instances int           `json:"instances,omitempty"`
	Delay     time.Duration `json:"delay,omitempty"`
}

// WireOp is an hw.CompOp on the socket: its buffers are offsets and
// lengths in the process's memfd.
type WireOp struct {
	ID            uint64 `json:"id"`
	Type          int    `json:"type"`
	Kind          int    `json:"kind"`
	Algo          int    `json:"algo"`
	Level         int    `json:"level"`
	Huffman       int    `json:"huffman"`
	Checksum      int    `json:"checksum"`
	WindowLog     int    `json:"window_log"`
	Flush         int    `json:"flush"`
	SrcOff        int64  `json:"src_off"`
	SrcLen        int64  `json:"src_len"`
	DstOff        int64  `json:"dst_off"`
	DstLen        int64  `json:"dst_len"`
	InputChecksum uint32 `json:"input_checksum"`
}

// WireDone is a completed operation.
type WireDone struct {
	ID       uint64 `json:"id"`
	Status   int    `json:"status"`
	Consumed int    `json:"consumed"`
	Produced int    `json:"produced"`
	Checksum uint32 `json:"checksum"`
	Debug    string `json:"debug,omitempty"`
}

// WireInstance describes an attached instance.
type WireInstance struct {
	Device string `json:"device"`
	QP     int    `json:"qp"`
	Node   int    `json:"node"`
	Name   string `json:"name"`
}

// WireBuffer describes a pinned buffer: a region of the memfd.
type WireBuffer struct {
	Handle uint64 `json:"handle"`
	Off    int64  `json:"off"`
	Len    int64  `json:"len"`
	Node   int    `json:"node"`
	IOVA   uint64 `json:"iova"`
}

// Error kinds a Response carries, so that a client can wrap the hw
// error the contract names.
const (
	ErrKindNoInstance     = "no_instance"
	ErrKindNoPinnedMemory = "no_pinned_memory"
	ErrKindDeviceDown     = "device_down"
	ErrKindBadRequest     = "bad_request"
	ErrKindFailed         = "failed"
)

// Response is the server's answer to one Request.
type Response struct {
	Error     string `json:"error,omitempty"`
	ErrorKind string `json:"error_kind,omitempty"`
	// Hello: the process as the server knows it, and the memfd's size
	// (the descriptor itself rides in the message's control data).
	PID        int    `json:"pid,omitempty"`
	MemSize    int64  `json:"mem_size,omitempty"`
	Completion string `json:"completion,omitempty"`
	// Attach, alloc, enqueue, dequeue, wait, devinfo.
	Instance *WireInstance `json:"instance,omitempty"`
	Buffer   *WireBuffer   `json:"buffer,omitempty"`
	Taken    int           `json:"taken,omitempty"`
	Done     []WireDone    `json:"done,omitempty"`
	Ready    bool          `json:"ready,omitempty"`
	DevInfo  *WireDevInfo  `json:"devinfo,omitempty"`
	// Stats: telemetry.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
}

// WireDevInfo is a device's capabilities and compressdev counters.
type WireDevInfo struct {
	DriverName      string `json:"driver_name"`
	NUMANode        int    `json:"numa_node"`
	MaxQueuePairs   int    `json:"max_queue_pairs"`
	EnqueuedCount   uint64 `json:"enqueued"`
	DequeuedCount   uint64 `json:"dequeued"`
	EnqueueErrCount uint64 `json:"enqueue_err"`
	DequeueErrCount uint64 `json:"dequeue_err"`
}

// errFrameTooLarge is returned for a frame announcing more than MaxFrame.
var errFrameTooLarge = errors.New("frame larger than the protocol allows")

// readFrame reads one length-prefixed frame.
func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	return readBody(r, hdr)
}

// readBody reads a frame's body once its header is read.
func readBody(r io.Reader, hdr [4]byte) ([]byte, error) {
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return nil, fmt.Errorf("qatdev: frame of %d bytes (max %d): %w", n, MaxFrame, errFrameTooLarge)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("qatdev: frame of %d bytes cut short: %w", n, err)
	}
	return b, nil
}

// frame encodes v as one frame.
func frame(v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("qatdev: encode: %w", err)
	}
	if len(body) > MaxFrame {
		return nil, fmt.Errorf("qatdev: message of %d bytes: %w", len(body), errFrameTooLarge)
	}
	out := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(body)))
	return append(out, body...), nil
}

// DecodeRequest parses and checks one request body: a JSON object with
// known fields only, a known op and values in range. Offsets are checked
// against the memfd later, by the server, which knows its size.
func DecodeRequest(body []byte) (Request, error) {
	var r Request
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Request{}, fmt.Errorf("qatdev: request: %w", err)
	}
	if dec.More() {
		return Request{}, errors.New("qatdev: request: data after the JSON object")
	}
	if err := r.validate(); err != nil {
		return Request{}, fmt.Errorf("qatdev: request %q: %w", string(r.Op), err)
	}
	return r, nil
}

// validate checks what can be checked without the server's state.
func (r Request) validate() error {
	known := false
	for _, o := range ops {
		if r.Op == o {
			known = true
		}
	}
	switch {
	case !known:
		return fmt.Errorf("op: unknown (one of %v)", ops)
	case r.QP < 0:
		return fmt.Errorf("qp: %d is negative", r.QP)
	case r.Size < 0:
		return fmt.Errorf("size: %d is negative", r.Size)
	case len(r.Ops) > MaxBurst:
		return fmt.Errorf("ops: %d operations in one burst (max %d)", len(r.Ops), MaxBurst)
	case r.Max < 0 || r.Max > MaxBurst:
		return fmt.Errorf("max: %d is outside 0..%d", r.Max, MaxBurst)
	case r.Timeout < 0:
		return fmt.Errorf("timeout: %v is negative", r.Timeout)
	case r.Delay < 0:
		return fmt.Errorf("delay: %v is negative", r.Delay)
	case r.Rate < 0 || r.Rate > 1 || r.Rate != r.Rate:
		return fmt.Errorf("rate: %v is not in 0..1", r.Rate)
	case r.Instances < 0:
		return fmt.Errorf("instances: %d is negative", r.Instances)
	}
	for i, o := range r.Ops {
		if err := o.validate(); err != nil {
			return fmt.Errorf("ops[%d]: %w", i, err)
		}
	}
	return nil
}

// validate checks an operation's buffer fields for sign and overflow.
func (o WireOp) validate() error {
	switch {
	case o.SrcOff < 0 || o.SrcLen < 0:
		return fmt.Errorf("src: offset %d length %d: negative", o.SrcOff, o.SrcLen)
	case o.DstOff < 0 || o.DstLen < 0:
		return fmt.Errorf("dst: offset %d length %d: negative", o.DstOff, o.DstLen)
	case o.SrcOff > 1<<40 || o.SrcLen > 1<<40 || o.DstOff > 1<<40 || o.DstLen > 1<<40:
		return errors.New("src/dst: offset or length beyond 1 TiB")
	}
	return nil
}

// inRange reports whether [off, off+n) lies within a region of size.
func inRange(off, n, size int64) bool { return off >= 0 && n >= 0 && off <= size && n <= size-off }

// jsonUnmarshal decodes a server response (from a trusted peer, so
// unknown fields are ignored: a newer server may add some).
func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
