// Package qat models Intel QuickAssist Technology (QAT) compression
// devices as one host's processes see them through the QAT user-space
// driver: devices of a published shape (dh895xcc, c62x, 4xxx) on a NUMA
// node, compression engines with a service-time model, instances handed to
// processes, request/response rings of a set depth, polling or thread
// (interrupt) completion with the syscalls each costs, USDM pinned memory
// from hugepages (or, with the legacy driver, physically contiguous kernel
// memory per request that pays for memory compaction), and faults.
//
// The model reproduces, one by one, the problems Alibaba met putting
// Tengine's gzip on QAT (see docs/qat.md and the seed summary): kernel
// compaction storms from per-request contiguous allocation, open/ioctl
// pairs per request, futex storms from thread completion, instances running
// out during a reload, and hugepages leaked until allocation fails.
//
// Output is real deflate, produced by klauspost/compress/flate (dynamic
// Huffman) or by this package's fixed-Huffman encoder, and decompression is
// the resumable inflater of internal/inflate, so every result can be checked.
//
// Service implements hw.CompressService for one host; Device implements
// hw.CompressDev and hw.CompletionWaiter, one queue pair per instance. The
// model runs no goroutines: each process is bound to the meter of the core
// it runs on (Service.BindProcess), enqueue time is that meter's Now, and
// completion times are computed at enqueue from the service-time model.
package qat
