// Package inflate is a resumable raw-deflate decoder (RFC 1951) shared by
// zlibshim's push-style Inflate and the QAT device model's stateful and
// stateless decompression (sim/qat): input arrives in pieces of any size,
// as zlib's inflate and QAT's stateful ops receive it, and the decoder
// stops wherever input or output space runs out and resumes on the next
// call, with no goroutine and no pull-style io.Reader below it (which is
// what klauspost/compress and compress/flate need, and why they cannot
// serve zlib's API or a device model in virtual time). It lives under
// internal/ and imports only the standard library so that neither user
// depends on the other: zlibshim must not import sim/, and a model under
// sim/ should not depend on the product package zlibshim.
//
// The design is zlib's inflate.c state machine made transactional: each
// step (a block header, a whole dynamic-table header, one literal or one
// length/distance pair) either completes or rolls back to where it began,
// keeping the few bytes it lacked for the next call. Held bytes are joined
// by new input a kilobyte at a time, so a call never copies its whole
// source, and once warm the decoder does not allocate. Huffman decoding
// follows Mark Adler's puff.c (canonical codes from counts and symbols)
// with a 9-bit lookup table in front. After each call Status says why it
// stopped (need input, destination full, stream end, corrupt); corrupt
// input is a *CorruptError wrapping ErrCorrupt, never a panic.
package inflate
