package hw

import "time"

// CompressAlgo mirrors enum rte_comp_algorithm.
type CompressAlgo int

// Compression algorithms.
const (
	AlgoNull CompressAlgo = iota
	AlgoDeflate
)

// Huffman mirrors enum rte_comp_huffman.
type Huffman int

// Huffman encodings for deflate.
const (
	HuffmanDefault Huffman = iota
	HuffmanFixed
	HuffmanDynamic
)

// ChecksumType mirrors enum rte_comp_checksum_type.
type ChecksumType int

// Checksums the device computes over uncompressed data.
const (
	ChecksumNone ChecksumType = iota
	ChecksumCRC32
	ChecksumAdler32
	ChecksumCRC32Adler32
)

// FlushFlag mirrors enum rte_comp_flush_flag.
type FlushFlag int

// Flush flags of one operation.
const (
	FlushNone  FlushFlag = iota // more data follows (stateful only)
	FlushSync                   // flush to a byte boundary
	FlushFull                   // flush and reset history: a restart point
	FlushFinal                  // end of the stream
)

// OpType mirrors enum rte_comp_op_type.
type OpType int

// Operation types.
const (
	OpStateless OpType = iota
	OpStateful
)

// OpStatus mirrors enum rte_comp_op_status.
type OpStatus int

// Operation statuses.
const (
	StatusNotProcessed OpStatus = iota
	StatusSuccess
	StatusInvalidArgs
	StatusError
	StatusInvalidState
	StatusOutOfSpaceTerminated  // destination too small, nothing usable
	StatusOutOfSpaceRecoverable // destination too small, resumable (stateful)
)

func (s OpStatus) String() string {
	switch s {
	case StatusNotProcessed:
		return "not-processed"
	case StatusSuccess:
		return "success"
	case StatusInvalidArgs:
		return "invalid-args"
	case StatusError:
		return "error"
	case StatusInvalidState:
		return "invalid-state"
	case StatusOutOfSpaceTerminated:
		return "out-of-space-terminated"
	case StatusOutOfSpaceRecoverable:
		return "out-of-space-recoverable"
	}
	return "unknown"
}

// XformKind says whether a transform compresses or decompresses
// (enum rte_comp_xform_type).
type XformKind int

// Transform kinds.
const (
	XformCompress XformKind = iota
	XformDecompress
)

// Xform mirrors struct rte_comp_xform: the parameters of a stream of
// operations. rte_compressdev_private_xform_create turns it into a device
// handle; here the handle is the Xform value itself.
type Xform struct {
	Kind     XformKind
	Algo     CompressAlgo
	Level    int // 1..9, as zlib; the device may map it to its own levels
	Huffman  Huffman
	Checksum ChecksumType
	// WindowLog is log2 of the history window (8..15).
	WindowLog int
}

// CompOp mirrors struct rte_comp_op: one operation with its source and
// destination buffers. Src and Dst are contiguous here; backends over
// DPDK chain mbufs as the device needs (an mbuf segment holds at most
// MaxSegmentData bytes).
type CompOp struct {
	Type  OpType
	Xform Xform
	Flush FlushFlag
	// Src is the input. For an operation staged in pinned memory it is a
	// view into a PinnedBuffer.
	Src []byte
	// Dst is the output space; the device writes Dst[:Produced].
	Dst []byte
	// Status, Consumed, Produced and Checksum are set by the device.
	Status   OpStatus
	Consumed int
	Produced int
	// Checksum is the CRC32 or Adler-32 of the consumed input (output
	// chksum), seeded from InputChecksum for chained operations.
	Checksum      uint32
	InputChecksum uint32
	// Debug carries a device-specific reason when Status is an error.
	Debug string
	// UserData is for the caller (rte_comp_op has no such field but every
	// application keeps one beside it).
	UserData uint64
}

// CompressCapabilities mirrors struct rte_compressdev_capabilities for
// deflate, plus the feature flags that matter to the shim.
type CompressCapabilities struct {
	DriverName     string
	NUMANode       int
	MaxQueuePairs  int
	Stateful       bool // stateful decompression supported
	FixedHuffman   bool
	DynamicHuffman bool
	CRC32          bool
	Adler32        bool
	MinWindowLog   int
	MaxWindowLog   int
	MaxLevel       int
	// FinalOnlyStateless says the device ends every stateless output
	// with a final block whatever the flush flag, so a stream cannot be
	// built from several stateless requests (DPDK 22.11's compress_isal
	// and compress_zlib behave so; QAT honours FlushSync and FlushFull).
	FinalOnlyStateless bool
}

// CompressStats mirrors struct rte_compressdev_stats.
type CompressStats struct {
	EnqueuedCount   uint64
	DequeuedCount   uint64
	EnqueueErrCount uint64 // operations refused at enqueue (ring full)
	DequeueErrCount uint64 // operations that completed with an error
}

// CompressDev mirrors one compressdev (rte_compressdev): configured,
// given queue pairs, started, then driven by enqueue and dequeue bursts
// of operations. On a QAT card, a process's instance is one such device
// queue pair.
type CompressDev interface {
	// Capabilities returns what the device supports
	// (rte_compressdev_info_get).
	Capabilities() CompressCapabilities
	// EnqueueBurst submits operations on queue pair qp and returns how
	// many were taken (rte_compressdev_enqueue_burst); a full ring takes
	// fewer.
	EnqueueBurst(qp int, ops []*CompOp) int
	// DequeueBurst returns completed operations on queue pair qp, in
	// submission order (rte_compressdev_dequeue_burst).
	DequeueBurst(qp int, ops []*CompOp) int
	// Stats returns the device's counters (rte_compressdev_stats_get).
	Stats() CompressStats
}

// CompletionWaiter is implemented by devices whose driver can put the
// caller to sleep until a completion arrives, as QAT's interrupt (thread)
// completion mode does, instead of the caller polling DequeueBurst. The
// sleep and the wake-up cost what the driver's futex and context switches
// cost.
type CompletionWaiter interface {
	// WaitCompletion blocks until queue pair qp has a completion to
	// dequeue or timeout passes, and reports whether one is ready.
	WaitCompletion(qp int, timeout time.Duration) bool
}
