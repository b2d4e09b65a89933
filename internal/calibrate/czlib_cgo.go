//go:build cgo && czlib

package calibrate

/*
#cgo LDFLAGS: -lz
#include <stdlib.h>
#include <zlib.h>

static int savanna_compress(unsigned char *dst, unsigned long *dlen, const unsigned char *src, unsigned long slen, int level) {
	return compress2(dst, dlen, src, slen, level);
}
*/
import "C"

import "fmt"

// cZlibStatus says whether C zlib is built in.
func cZlibStatus() string { return "" }

// cZlibVersion is the linked zlib's version.
func cZlibVersion() string { return C.GoString(C.zlibVersion()) }

// cZlibDeflate is C zlib's compress2 at level over the corpus: what
// nginx and Tengine run for gzip, beside the Go path Savanna prices.
func cZlibDeflate(level int) Bench {
	return Bench{Name: fmt.Sprintf("zlib_c_l%d", level), Unit: "ns/input byte",
		What: fmt.Sprintf("C zlib %s compress2 level %d over the same corpus, thread CPU time per input byte", cZlibVersion(), level),
		Run: func(scale float64) (Sample, error) {
			data := corpus(corpusSize)
			bound := C.compressBound(C.uLong(len(data)))
			src := C.CBytes(data)
			defer C.free(src)
			dst := C.malloc(C.size_t(bound))
			defer C.free(dst)
			v, err := perByte(scale, len(data), func() error {
				dlen := C.ulong(bound)
				if rc := C.savanna_compress((*C.uchar)(dst), &dlen, (*C.uchar)(src), C.ulong(len(data)), C.int(level)); rc != C.Z_OK {
					return fmt.Errorf("compress2 level %d: zlib error %d", level, int(rc))
				}
				return nil
			})
			return Sample{Value: v}, err
		}}
}
