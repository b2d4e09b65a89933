package resp

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Default limits that keep a hostile peer from making the parser
// allocate without bound (Redis's proto-max-bulk-len is 512 MiB; a test
// rig needs far less). Redis's multibulk limit is 1024*1024 elements and
// its inline limit PROTO_INLINE_MAX_SIZE is 64 KiB.
const (
	MaxBulkLen   = 64 << 20
	MaxArrayLen  = 1 << 20
	MaxInlineLen = 64 << 10
)

// headerMax bounds an array or bulk header line ("*<n>" or "$<n>"), as
// Redis bounds a header before it has seen its CRLF.
const headerMax = 64

// Limits bound what one request may contain; a request over a limit is a
// *ProtocolError. Zero fields take the defaults above.
type Limits struct {
	MaxArgs   int // elements of one command
	MaxBulk   int // bytes of one argument
	MaxInline int // bytes of an inline command line
}

// DefaultLimits returns the limits ParseCommand applies.
func DefaultLimits() Limits {
	return Limits{MaxArgs: MaxArrayLen, MaxBulk: MaxBulkLen, MaxInline: MaxInlineLen}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxArgs <= 0 {
		l.MaxArgs = d.MaxArgs
	}
	if l.MaxBulk <= 0 {
		l.MaxBulk = d.MaxBulk
	}
	if l.MaxInline <= 0 {
		l.MaxInline = d.MaxInline
	}
	return l
}

// ErrIncomplete means more bytes are needed.
var ErrIncomplete = errors.New("resp: incomplete")

// ProtocolError is a malformed message; the connection cannot continue.
// Msg is the text Redis puts after "ERR Protocol error: " (networking.c),
// so that a server can answer as Redis does.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "resp: protocol error: " + e.Msg }

func protoErr(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// ParseCommand parses one request from the start of b under
// DefaultLimits: a RESP array of bulk strings, or an inline command
// (words separated by spaces, as redis-cli and telnet send). It returns
// the arguments (slices of b, valid until b changes), the bytes consumed,
// or ErrIncomplete, or a *ProtocolError. args is reused to avoid
// allocation. An empty inline line and a "*0" or "*-1" array yield no
// arguments, which the caller skips, as Redis does.
func ParseCommand(b []byte, args [][]byte) ([][]byte, int, error) {
	return ParseCommandLimits(b, args, DefaultLimits())
}

// ParseCommandLimits is ParseCommand under lim. Lines may end in CRLF or
// a bare LF, as Redis accepts. The error messages are Redis's (processMultibulkBuffer
// and processInlineBuffer in networking.c).
func ParseCommandLimits(b []byte, args [][]byte, lim Limits) ([][]byte, int, error) {
	args = args[:0]
	if len(b) == 0 {
		return args, 0, ErrIncomplete
	}
	lim = lim.withDefaults()
	if b[0] != '*' {
		return parseInline(b, args, lim)
	}
	hdr, off, err := line(b, 0, headerMax)
	if err != nil {
		return args, 0, err
	}
	n, ok := parseLen(hdr[1:])
	if !ok || n > lim.MaxArgs {
		return args, 0, protoErr("invalid multibulk length")
	}
	for i := 0; i < n; i++ {
		if off >= len(b) {
			return args, 0, ErrIncomplete
		}
		// A header that cannot be a bulk string fails at once, without
		// waiting for its line.
		if c := b[off]; c != '$' && c != '\r' && c != '\n' {
			return args, 0, protoErr("expected '$', got '%c'", c)
		}
		h, next, err := line(b, off, headerMax)
		if err != nil {
			return args, 0, err
		}
		if len(h) == 0 || h[0] != '$' {
			c := byte(' ')
			if len(h) > 0 {
				c = h[0]
			}
			return args, 0, protoErr("expected '$', got '%c'", c)
		}
		l, ok := parseLen(h[1:])
		if !ok || l < 0 || l > lim.MaxBulk {
			return args, 0, protoErr("invalid bulk length")
		}
		if len(b)-next < l+2 {
			return args, 0, ErrIncomplete
		}
		if b[next+l] != '\r' || b[next+l+1] != '\n' {
			return args, 0, protoErr("bulk string not terminated by CRLF")
		}
		args = append(args, b[next:next+l:next+l])
		off = next + l + 2
	}
	return args, off, nil
}

// parseInline parses an inline command: space-separated words on one
// line (Redis's processInlineBuffer, without quoting).
func parseInline(b []byte, args [][]byte, lim Limits) ([][]byte, int, error) {
	l, off, err := line(b, 0, lim.MaxInline)
	if err != nil {
		return args, 0, err
	}
	for _, f := range bytes.Fields(l) {
		if len(args) >= lim.MaxArgs {
			return args[:0], 0, protoErr("invalid multibulk length")
		}
		args = append(args, f)
	}
	return args, off, nil
}

// line returns the line at b[off:] without its LF and a CR before it,
// and the offset after the LF; a line longer than max (plus CRLF) is a
// protocol error even before its end has arrived.
func line(b []byte, off, max int) ([]byte, int, error) {
	rest := b[off:]
	i := bytes.IndexByte(rest[:min(len(rest), max+2)], '\n')
	if i < 0 {
		if len(rest) > max+2 {
			return nil, 0, protoErr("too big inline request")
		}
		return nil, 0, ErrIncomplete
	}
	l := rest[:i]
	if len(l) > 0 && l[len(l)-1] == '\r' {
		l = l[:len(l)-1]
	}
	return l, off + i + 1, nil
}

// parseLen parses the decimal length of a header line after its type
// byte, as Redis's string2ll with its bounds: at most 11 characters, an
// optional minus sign, digits only.
func parseLen(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 11 {
		return 0, false
	}
	neg := false
	if b[0] == '-' {
		neg, b = true, b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseInt reads a decimal integer at b[off:] ending in CRLF and returns
// it with the offset after the CRLF.
func parseInt(b []byte, off int) (int, int, error) {
	end := bytes.IndexByte(b[off:], '\r')
	if end < 0 {
		if len(b)-off > 20 {
			return 0, 0, protoErr("integer too long")
		}
		return 0, 0, ErrIncomplete
	}
	end += off
	if end+1 >= len(b) {
		return 0, 0, ErrIncomplete
	}
	if b[end+1] != '\n' {
		return 0, 0, protoErr("CR not followed by LF")
	}
	n, err := strconv.Atoi(string(b[off:end]))
	if err != nil {
		return 0, 0, protoErr("bad integer %q", b[off:end])
	}
	return n, end + 2, nil
}

// ReplyKind is the type of a reply.
type ReplyKind byte

// Reply kinds, by their first byte.
const (
	SimpleString ReplyKind = '+'
	ErrorReply   ReplyKind = '-'
	Integer      ReplyKind = ':'
	BulkString   ReplyKind = '$'
	Array        ReplyKind = '*'
)

// SkipReply finds the end of one complete reply at the start of b, as a
// client that counts replies needs, and returns its kind and length, or
// ErrIncomplete, or a *ProtocolError.
func SkipReply(b []byte) (ReplyKind, int, error) {
	if len(b) == 0 {
		return 0, 0, ErrIncomplete
	}
	kind := ReplyKind(b[0])
	switch kind {
	case SimpleString, ErrorReply, Integer:
		end := bytes.Index(b, []byte("\r\n"))
		if end < 0 {
			return kind, 0, ErrIncomplete
		}
		return kind, end + 2, nil
	case BulkString:
		l, off, err := parseInt(b, 1)
		if err != nil {
			return kind, 0, err
		}
		if l < 0 {
			return kind, off, nil
		}
		if l > MaxBulkLen {
			return kind, 0, protoErr("bulk length %d", l)
		}
		if len(b) < off+l+2 {
			return kind, 0, ErrIncomplete
		}
		return kind, off + l + 2, nil
	case Array:
		n, off, err := parseInt(b, 1)
		if err != nil {
			return kind, 0, err
		}
		if n > MaxArrayLen {
			return kind, 0, protoErr("array of %d elements", n)
		}
		for i := 0; i < n; i++ {
			_, l, err := SkipReply(b[off:])
			if err != nil {
				return kind, 0, err
			}
			off += l
		}
		return kind, off, nil
	}
	return kind, 0, protoErr("unknown reply type %q", b[0])
}
