package http

import (
	"bytes"
	"errors"
)

// Limits on what a peer may send before the message is refused. A header
// (request or status line, fields and the blank line that ends them) of
// more than maxHeaderBytes is refused whatever it is cut into, so that
// the verdict does not depend on how the bytes arrived.
const (
	maxHeaderBytes = 16 << 10
	maxBodyBytes   = 64 << 20
)

var (
	errIncomplete = errors.New("http: incomplete")
	errMalformed  = errors.New("http: malformed message")
	errTooLarge   = errors.New("http: header too large")
)

var headerEnd = []byte("\r\n\r\n")

// headScan looks for the end of a header in a message that grows between
// calls (the same message, more of it each time). It remembers how far it
// has looked, so that a header delivered in k pieces is searched in
// O(size + k), not O(size * k) as a search from byte 0 each time would.
type headScan struct {
	scanned int // bytes of the message searched without finding the end
	// parsed is set once the header was found and parsed: what it said
	// is kept by the parser, and later calls only wait for the body.
	parsed bool
}

// header is the stage both parsers share: find the header's end
// (resuming) and parse it once with parseHead. It returns nil once the
// header is parsed, errIncomplete while it is not whole, or the error
// that refuses the message (the caller then resets). work counts the
// bytes examined.
func (s *headScan) header(b []byte, work *uint64, parseHead func(b []byte, end int) error) error {
	if s.parsed {
		return nil
	}
	end, err := s.find(b, work)
	if err == nil {
		err = parseHead(b, end)
	}
	if err == nil {
		s.parsed = true
	}
	return err
}

// startLine splits the header b[:end] at its first CRLF: the start line
// ends at lineEnd, and the fields are rest.
func startLine(b []byte, end int) (lineEnd int, rest []byte) {
	head := b[:end]
	if i := bytes.Index(head, []byte("\r\n")); i >= 0 {
		return i, head[i+2:]
	}
	return end, nil
}

// find returns the offset of the "\r\n\r\n" ending the header at the start
// of b. The header must end within maxHeaderBytes: beyond, errTooLarge.
// work counts the bytes examined.
func (s *headScan) find(b []byte, work *uint64) (int, error) {
	lim := min(len(b), maxHeaderBytes)
	// The terminator may straddle the previous end: look again at its
	// last three bytes.
	from := min(max(0, s.scanned-(len(headerEnd)-1)), lim)
	*work += uint64(lim - from)
	if i := bytes.Index(b[from:lim], headerEnd); i >= 0 {
		return from + i, nil
	}
	s.scanned = lim
	if len(b) >= maxHeaderBytes {
		return -1, errTooLarge
	}
	return -1, errIncomplete
}

// span is a field of the start line, as offsets into the message: offsets
// stay true when the buffer holding the message is moved or grown between
// calls, where slices of it would not.
type span struct{ start, end int }

func (s span) of(b []byte) []byte { return b[s.start:s.end] }

// isLineSpace reports the bytes a start line's words may be separated by:
// RFC 9112 section 3 lets a recipient treat SP, HTAB, VT, FF and a bare
// CR as the separator.
func isLineSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'
}

// lineWords splits the start line b[:end] into at most len(out) words and
// returns how many it found (more than len(out) is reported as
// len(out)+1).
func lineWords(b []byte, end int, out []span) int {
	n := 0
	for i := 0; i < end; {
		for i < end && isLineSpace(b[i]) {
			i++
		}
		if i == end {
			break
		}
		j := i
		for j < end && !isLineSpace(b[j]) {
			j++
		}
		if n == len(out) {
			return n + 1
		}
		out[n] = span{i, j}
		n++
		i = j
	}
	return n
}

// contentLength parses a Content-Length value (RFC 9110 section 8.6:
// 1*DIGIT) no larger than maxBodyBytes, without allocating.
func contentLength(v []byte) (int, bool) {
	if len(v) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n = n*10 + int(c-'0'); n > maxBodyBytes {
			return 0, false
		}
	}
	return n, true
}
