// Package zlibtest holds the specs of the libz.so.1 drop-in (dropin/zlib
// and dropin/zlibgo): they build it with dropin/build and run zlib's
// behaviour, as a C program (dropin/zlib/test/zlibcheck.c), against the
// system zlib, the drop-in, and the drop-in under AddressSanitizer. They
// need gcc, binutils and zlib1g-dev, and skip without them.
package zlibtest
