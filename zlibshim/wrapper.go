package zlibshim

import "encoding/binary"

// The wrappers around deflate data: zlib (RFC 1950), gzip (RFC 1952) and
// QATzip's gzip-ext member header.

const (
	gzipID1      = 0x1f
	gzipID2      = 0x8b
	gzipCM       = 8 // deflate
	gzipFEXTRA   = 1 << 2
	gzipFNAME    = 1 << 3
	gzipFCOMMENT = 1 << 4
	gzipFHCRC    = 1 << 1
	gzipOSUnk    = 255 // RFC 1952: unknown OS, as Go's compress/gzip writes
	gzipHdrLen   = 10
	// gzipExtHdrLen is QATzip's QzGzH_T: the 10-byte header, XLEN, then
	// the subfield 'Q' 'Z', its length 8, and the member's input size and
	// deflate size, all little-endian.
	gzipExtHdrLen = gzipHdrLen + 2 + 4 + 8
	gzipTrailer   = 8
	zlibHdrLen    = 2
	zlibTrailer   = 4
)

// gzipXFL is RFC 1952's XFL: 2 for the slowest level, 4 for the fastest.
func gzipXFL(level int) byte {
	switch level {
	case BestCompression:
		return 2
	case BestSpeed:
		return 4
	}
	return 0
}

// appendGzipHeader appends a 10-byte gzip header without optional fields
// and a zero MTIME, as compress/gzip does for an empty Header.
func appendGzipHeader(b []byte, level int) []byte {
	return append(b, gzipID1, gzipID2, gzipCM, 0, 0, 0, 0, 0, gzipXFL(level), gzipOSUnk)
}

// appendGzipExtHeader appends a gzip-ext member header whose sizes are
// filled in later by patchGzipExtHeader.
func appendGzipExtHeader(b []byte, level int) []byte {
	b = append(b, gzipID1, gzipID2, gzipCM, gzipFEXTRA, 0, 0, 0, 0, gzipXFL(level), gzipOSUnk)
	b = binary.LittleEndian.AppendUint16(b, 4+8) // XLEN
	b = append(b, 'Q', 'Z')
	b = binary.LittleEndian.AppendUint16(b, 8) // subfield LEN
	return append(b, 0, 0, 0, 0, 0, 0, 0, 0)
}

// patchGzipExtHeader writes the member's input and deflate sizes into the
// header starting at hdr.
func patchGzipExtHeader(hdr []byte, srcSize, deflateSize uint32) {
	binary.LittleEndian.PutUint32(hdr[16:], srcSize)
	binary.LittleEndian.PutUint32(hdr[20:], deflateSize)
}

// appendGzipTrailer appends CRC32 and ISIZE (input size mod 2^32).
func appendGzipTrailer(b []byte, crc, isize uint32) []byte {
	b = binary.LittleEndian.AppendUint32(b, crc)
	return binary.LittleEndian.AppendUint32(b, isize)
}

// zlibHeader is RFC 1950's CMF and FLG for a 32 KiB window, with FLEVEL
// chosen as zlib's deflate.c chooses it.
func zlibHeader(level int, strategy Strategy) [2]byte {
	var flevel uint16
	switch {
	case strategy >= HuffmanOnly || level < 2:
		flevel = 0
	case level < 6:
		flevel = 1
	case level == 6 || level == DefaultCompression:
		flevel = 2
	default:
		flevel = 3
	}
	h := uint16(0x78)<<8 | flevel<<6
	h += 31 - h%31
	return [2]byte{byte(h >> 8), byte(h)}
}

// appendEmptyFinalBlock appends a final fixed-Huffman block holding only
// the end-of-block code, as zlib writes at Z_FINISH with nothing pending.
// It must start at a byte boundary.
func appendEmptyFinalBlock(b []byte) []byte { return append(b, 0x03, 0x00) }

// appendSyncMarker appends an empty non-final stored block, the
// sync-flush marker (RFC 1951 3.2.4), at a byte boundary.
func appendSyncMarker(b []byte) []byte { return append(b, 0x00, 0x00, 0x00, 0xff, 0xff) }
