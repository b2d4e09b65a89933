package zlibshim

import (
	"encoding/binary"
	"fmt"
)

// maxHeader bounds a gzip header (FEXTRA, FNAME, FCOMMENT are otherwise
// unbounded); a longer one is treated as corrupt rather than buffered
// without end.
const maxHeader = 64 << 10

// parseZlibHeader checks an RFC 1950 header. It returns the header length
// (2), 0 when more bytes are needed, or an error wrapping ErrData.
func parseZlibHeader(b []byte, window int) (int, error) {
	if len(b) < zlibHdrLen {
		return 0, nil
	}
	cmf, flg := b[0], b[1]
	switch {
	case (uint16(cmf)<<8|uint16(flg))%31 != 0:
		return 0, fmt.Errorf("zlib header %02x%02x: check bits wrong: %w", cmf, flg, ErrData)
	case cmf&0x0f != Deflated:
		return 0, fmt.Errorf("zlib header: method %d is not deflate: %w", cmf&0x0f, ErrData)
	case int(cmf>>4)+8 > window:
		return 0, fmt.Errorf("zlib header: window 2^%d larger than 2^%d: %w", cmf>>4+8, window, ErrData)
	case flg&0x20 != 0:
		return 0, fmt.Errorf("zlib header: preset dictionary needed (not supported): %w", ErrData)
	}
	return zlibHdrLen, nil
}

// parseGzipHeader checks an RFC 1952 member header, optional fields
// included. It returns the header length, 0 when more bytes are needed,
// or an error wrapping ErrData.
func parseGzipHeader(b []byte) (int, error) {
	if len(b) < gzipHdrLen {
		switch {
		case len(b) >= 1 && b[0] != gzipID1, len(b) >= 2 && b[1] != gzipID2:
			return 0, fmt.Errorf("gzip header: bad magic: %w", ErrData)
		case len(b) >= 3 && b[2] != gzipCM:
			return 0, fmt.Errorf("gzip header: method %d is not deflate: %w", b[2], ErrData)
		case len(b) >= 4 && b[3]&0xe0 != 0:
			return 0, fmt.Errorf("gzip header: reserved flags %#x set: %w", b[3], ErrData)
		}
		return 0, nil
	}
	if b[0] != gzipID1 || b[1] != gzipID2 {
		return 0, fmt.Errorf("gzip header: bad magic %02x%02x: %w", b[0], b[1], ErrData)
	}
	if b[2] != gzipCM {
		return 0, fmt.Errorf("gzip header: method %d is not deflate: %w", b[2], ErrData)
	}
	flg := b[3]
	if flg&0xe0 != 0 {
		return 0, fmt.Errorf("gzip header: reserved flags %#x set: %w", flg, ErrData)
	}
	n := gzipHdrLen
	if flg&gzipFEXTRA != 0 {
		if len(b) < n+2 {
			return 0, nil
		}
		n += 2 + int(binary.LittleEndian.Uint16(b[n:]))
		if len(b) < n {
			return 0, nil
		}
	}
	for _, f := range []byte{gzipFNAME, gzipFCOMMENT} {
		if flg&f == 0 {
			continue
		}
		i := indexZero(b[n:])
		if i < 0 {
			return 0, nil
		}
		n += i + 1
	}
	if flg&gzipFHCRC != 0 {
		if len(b) < n+2 {
			return 0, nil
		}
		want := binary.LittleEndian.Uint16(b[n:])
		if got := uint16(crc32Update(0, b[:n])); got != want {
			return 0, fmt.Errorf("gzip header: header CRC %04x, computed %04x: %w", want, got, ErrData)
		}
		n += 2
	}
	return n, nil
}

func indexZero(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}
