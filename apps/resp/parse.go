package resp

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Limits that keep a hostile peer from making the parser allocate without
// bound (Redis's proto-max-bulk-len is 512 MiB; a test rig needs far less).
const (
	MaxBulkLen   = 64 << 20
	MaxArrayLen  = 1 << 20
	MaxInlineLen = 64 << 10
)

// ErrIncomplete means more bytes are needed.
var ErrIncomplete = errors.New("resp: incomplete")

// ProtocolError is a malformed message; the connection cannot continue.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "resp: protocol error: " + e.Msg }

func protoErr(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// ParseCommand parses one request from the start of b: a RESP array of
// bulk strings, or an inline command (words separated by spaces, as
// redis-cli and telnet send). It returns the arguments (slices of b, valid
// until b changes), the bytes consumed, or ErrIncomplete, or a
// *ProtocolError. args is reused to avoid allocation.
func ParseCommand(b []byte, args [][]byte) ([][]byte, int, error) {
	args = args[:0]
	if len(b) == 0 {
		return args, 0, ErrIncomplete
	}
	if b[0] != '*' {
		return parseInline(b, args)
	}
	n, off, err := parseInt(b, 1)
	if err != nil {
		return args, 0, err
	}
	if n < 0 {
		return args, off, nil // a null array: nothing to do
	}
	if n > MaxArrayLen {
		return args, 0, protoErr("array of %d elements", n)
	}
	for i := 0; i < n; i++ {
		if off >= len(b) {
			return args, 0, ErrIncomplete
		}
		if b[off] != '$' {
			return args, 0, protoErr("expected '$', got %q", b[off])
		}
		l, next, err := parseInt(b, off+1)
		if err != nil {
			return args, 0, err
		}
		if l < 0 || l > MaxBulkLen {
			return args, 0, protoErr("bulk length %d", l)
		}
		if len(b) < next+l+2 {
			return args, 0, ErrIncomplete
		}
		if b[next+l] != '\r' || b[next+l+1] != '\n' {
			return args, 0, protoErr("bulk string not followed by CRLF")
		}
		args = append(args, b[next:next+l])
		off = next + l + 2
	}
	return args, off, nil
}

func parseInline(b []byte, args [][]byte) ([][]byte, int, error) {
	end := bytes.IndexByte(b, '\n')
	if end < 0 {
		if len(b) > MaxInlineLen {
			return args, 0, protoErr("inline command longer than %d bytes", MaxInlineLen)
		}
		return args, 0, ErrIncomplete
	}
	line := bytes.TrimRight(b[:end], "\r")
	for _, f := range bytes.Fields(line) {
		args = append(args, f)
	}
	return args, end + 1, nil
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
