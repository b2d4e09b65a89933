// Package zlibshim is a zlib-shaped compression library that offloads
// deflate to a compression accelerator (Intel QAT in Tengine's story) and
// falls back to software (klauspost/compress) whenever the hardware cannot
// serve a request, without losing or duplicating a byte.
//
// It works only against the hardware contracts of package hw
// (hw.CompressService, hw.CompressDev, hw.Meter): the same code runs over
// the QAT model in virtual time and over real compressdevs.
//
// Shape (zlib 1.2.x manual, https://zlib.net/manual.html): a Process per
// worker process holds the service, the meter, the policy and the
// statistics; DeflateInit2/Deflate/DeflateEnd and InflateInit2/Inflate/
// InflateEnd stream as zlib's z_stream does, with NextIn/NextOut in place
// of next_in/avail_in and next_out/avail_out; NewWriter and NewReader are
// drop-in io.WriteCloser/io.ReadCloser replacements for compress/gzip and
// compress/zlib.
//
// Offload follows QATzip (https://github.com/intel/QATzip): input is
// staged in pinned (USDM) buffers, compressed as stateless requests of a
// set size that end on full-flush boundaries so their outputs join into
// one deflate stream (or, in the gzip-ext format, into concatenated gzip
// members with QATzip's "QZ" extra field); inputs below a threshold go to
// software; after a hardware failure a set number of requests are served
// in software before hardware is tried again.
//
// See docs/zlibshim.md for the full account.
package zlibshim
