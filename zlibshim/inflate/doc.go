// Package inflate is a resumable raw-deflate decoder (RFC 1951) for
// zlibshim's push-style Inflate: input arrives in pieces of any size, as
// zlib's inflate receives it, and the decoder stops wherever input or
// output space runs out and resumes on the next call, with no goroutine
// and no pull-style io.Reader below it (which is what klauspost/compress
// and compress/flate need, and why they cannot serve zlib's API).
//
// The design is zlib's inflate.c state machine made transactional: each
// step (a block header, a whole dynamic-table header, one literal or one
// length/distance pair) either completes or rolls back to where it began,
// keeping the few bytes it lacked for the next call. Huffman decoding
// follows Mark Adler's puff.c (canonical codes from counts and symbols)
// with a 9-bit lookup table in front. Corrupt input is an error wrapping
// ErrCorrupt, never a panic.
package inflate
