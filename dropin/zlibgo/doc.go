//go:build cgo

// Command zlibgo is Savanna's zlib shim as a C shared library
// (-buildmode=c-shared), loaded lazily by the libz.so.1 drop-in
// (dropin/zlib) in each process that opens a deflate stream. It holds one
// zlibshim.Process per OS process, made on first use, and offers the
// drop-in a minimal C ABI over it: init a deflate stream, deflate, reset,
// end, the output bound and the statistics (docs/zlib-dropin.md).
//
// It needs cgo: every file says so, so that a CGO_ENABLED=0 build of
// the module leaves it out. Like cmd/qzip it is wiring: it chooses the
// compression service the shim runs on (service.go), so it may import
// the models.
package main

// main is required by -buildmode=c-shared and never runs.
func main() {}
