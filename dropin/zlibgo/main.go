//go:build cgo

package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import "unsafe"

// The C ABI the drop-in calls (dropin/zlib/dropin.h, struct sv_go). Return
// values are zlib's codes.

//export savanna_zlibgo_deflate_init
func savanna_zlibgo_deflate_init(level, windowBits, memLevel, strategy C.int, handle *C.uint64_t) C.int {
	h, rc := lib.deflateInit(int(level), int(windowBits), int(memLevel), int(strategy))
	*handle = C.uint64_t(h)
	return C.int(rc)
}

//export savanna_zlibgo_deflate
func savanna_zlibgo_deflate(handle C.uint64_t, in *C.uchar, availIn C.uint, out *C.uchar, availOut C.uint,
	flush C.int, consumed, produced *C.uint) C.int {
	var inb, outb []byte
	if in != nil && availIn > 0 {
		inb = unsafe.Slice((*byte)(unsafe.Pointer(in)), int(availIn))
	}
	if out != nil && availOut > 0 {
		outb = unsafe.Slice((*byte)(unsafe.Pointer(out)), int(availOut))
	}
	c, p, rc := lib.deflate(uintptr(handle), inb, outb, int(flush))
	*consumed, *produced = C.uint(c), C.uint(p)
	return C.int(rc)
}

//export savanna_zlibgo_deflate_reset
func savanna_zlibgo_deflate_reset(handle C.uint64_t) C.int {
	return C.int(lib.deflateReset(uintptr(handle)))
}

//export savanna_zlibgo_deflate_end
func savanna_zlibgo_deflate_end(handle C.uint64_t) C.int {
	return C.int(lib.deflateEnd(uintptr(handle)))
}

//export savanna_zlibgo_deflate_bound
func savanna_zlibgo_deflate_bound(sourceLen C.ulong) C.ulong {
	return C.ulong(lib.bound(uint64(sourceLen)))
}

// savanna_zlibgo_stats writes the shim's statistics as JSON into buf (not
// NUL-terminated past len) and returns the length the whole text needs.
//
//export savanna_zlibgo_stats
func savanna_zlibgo_stats(buf *C.char, n C.size_t) C.size_t {
	b := lib.stats()
	if buf != nil && n > 0 {
		dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
		k := copy(dst, b)
		if k < len(dst) {
			dst[k] = 0
		}
	}
	return C.size_t(len(b))
}
