package kv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Limits bound what a client may send.
type Limits struct {
	// MaxArgs bounds the elements of one command (default 1Mi, as
	// Redis's 1024*1024 multibulk limit).
	MaxArgs int `yaml:"max_args"`
	// MaxBulk bounds one argument in bytes (default 512 MiB as Redis's
	// proto-max-bulk-len).
	MaxBulk int `yaml:"max_bulk"`
	// MaxInline bounds an inline command line (default 64 KiB, Redis's
	// PROTO_INLINE_MAX_SIZE).
	MaxInline int `yaml:"max_inline"`
}

// Defaults for Limits.
const (
	DefaultMaxArgs   = 1 << 20
	DefaultMaxBulk   = 512 << 20
	DefaultMaxInline = 64 << 10
)

// WithDefaults fills zero fields.
func (l Limits) WithDefaults() Limits {
	if l.MaxArgs == 0 {
		l.MaxArgs = DefaultMaxArgs
	}
	if l.MaxBulk == 0 {
		l.MaxBulk = DefaultMaxBulk
	}
	if l.MaxInline == 0 {
		l.MaxInline = DefaultMaxInline
	}
	return l
}

// Validate names the first bad key.
func (l Limits) Validate() error {
	if l.MaxArgs < 0 || l.MaxArgs > 1<<24 {
		return fmt.Errorf("max_args: %d is outside 1..%d", l.MaxArgs, 1<<24)
	}
	if l.MaxBulk < 0 || l.MaxBulk > 1<<30 {
		return fmt.Errorf("max_bulk: %d is outside 1..%d", l.MaxBulk, 1<<30)
	}
	if l.MaxInline < 0 || l.MaxInline > 1<<24 {
		return fmt.Errorf("max_inline: %d is outside 1..%d", l.MaxInline, 1<<24)
	}
	return nil
}

// ProtocolError is a malformed request: the server replies with it and
// closes the connection.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

func protoErr(format string, a ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, a...)}
}

// Reader parses commands from a stream.
type Reader struct {
	r   *bufio.Reader
	lim Limits
}

// NewReader returns a Reader over r with limits lim (zero fields take
// defaults).
func NewReader(r *bufio.Reader, lim Limits) *Reader {
	return &Reader{r: r, lim: lim.WithDefaults()}
}

// Buffered returns the bytes read from the stream and not yet parsed: a
// server flushes its replies when it is zero (the pipeline is drained).
func (p *Reader) Buffered() int { return p.r.Buffered() }

// line reads one CRLF-terminated line of at most max bytes, without the
// CRLF. The slice is valid until the next read.
func (p *Reader) line(max int) ([]byte, error) {
	var acc []byte
	for {
		frag, err := p.r.ReadSlice('\n')
		if err == nil {
			if acc != nil {
				acc = append(acc, frag...)
				frag = acc
			}
			if len(frag) > max+2 {
				return nil, protoErr("too big inline request")
			}
			n := len(frag) - 1
			if n > 0 && frag[n-1] == '\r' {
				n--
			}
			return frag[:n], nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			acc = append(acc, frag...)
			if len(acc) > max+2 {
				return nil, protoErr("too big inline request")
			}
			continue
		}
		if len(frag) > 0 || acc != nil {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
}

// parseLen parses a decimal length of a header line after its type byte.
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

// ReadCommand reads one command and returns its arguments, appended to
// args[:0]. It returns io.EOF at a clean end of stream, a *ProtocolError
// on malformed input, and an empty slice for an empty inline line or a
// "*0"/"*-1" array (which the caller skips, as Redis does).
func (p *Reader) ReadCommand(args [][]byte) ([][]byte, error) {
	args = args[:0]
	b, err := p.r.Peek(1)
	if err != nil {
		return args, err
	}
	if b[0] != '*' {
		return p.inline(args)
	}
	hdr, err := p.line(64)
	if err != nil {
		return args, eofIsUnexpected(err)
	}
	n, ok := parseLen(hdr[1:])
	if !ok || n > p.lim.MaxArgs {
		return args, protoErr("invalid multibulk length")
	}
	for i := 0; i < n; i++ {
		h, err := p.line(64)
		if err != nil {
			return args, eofIsUnexpected(err)
		}
		if len(h) == 0 || h[0] != '$' {
			c := byte(' ')
			if len(h) > 0 {
				c = h[0]
			}
			return args, protoErr("expected '$', got '%c'", c)
		}
		l, ok := parseLen(h[1:])
		if !ok || l < 0 || l > p.lim.MaxBulk {
			return args, protoErr("invalid bulk length")
		}
		arg, err := p.bulk(l + 2)
		if err != nil {
			return args, eofIsUnexpected(err)
		}
		if arg[l] != '\r' || arg[l+1] != '\n' {
			return args, protoErr("bulk string not terminated by CRLF")
		}
		args = append(args, arg[:l:l])
	}
	return args, nil
}

// bulk reads need bytes, growing its buffer as they arrive so that a
// large announced length costs memory only once the bytes come.
func (p *Reader) bulk(need int) ([]byte, error) {
	buf := make([]byte, 0, min(need, 64<<10))
	for len(buf) < need {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(need-len(buf), cap(buf)))
		}
		n, err := p.r.Read(buf[len(buf):min(cap(buf), need)])
		buf = buf[:len(buf)+n]
		if err != nil && len(buf) < need {
			return nil, err
		}
	}
	return buf, nil
}

// inline parses an inline command: space-separated words on one line
// (Redis's processInlineBuffer, without quoting).
func (p *Reader) inline(args [][]byte) ([][]byte, error) {
	l, err := p.line(p.lim.MaxInline)
	if err != nil {
		return args, eofIsUnexpected(err)
	}
	for _, f := range bytes.Fields(l) {
		if len(args) >= p.lim.MaxArgs {
			return args, protoErr("invalid multibulk length")
		}
		args = append(args, append([]byte(nil), f...))
	}
	return args, nil
}

func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Reply writers (RESP2 types).

func writeSimple(w *bufio.Writer, s string) {
	w.WriteByte('+')
	w.WriteString(s)
	w.WriteString("\r\n")
}
func writeError(w *bufio.Writer, s string) { w.WriteByte('-'); w.WriteString(s); w.WriteString("\r\n") }

func writeInt(w *bufio.Writer, n int64) {
	var b [24]byte
	w.WriteByte(':')
	w.Write(appendInt(b[:0], n))
	w.WriteString("\r\n")
}

func writeBulk(w *bufio.Writer, v []byte) {
	if v == nil {
		w.WriteString("$-1\r\n")
		return
	}
	var b [24]byte
	w.WriteByte('$')
	w.Write(appendInt(b[:0], int64(len(v))))
	w.WriteString("\r\n")
	w.Write(v)
	w.WriteString("\r\n")
}

func writeArrayLen(w *bufio.Writer, n int) {
	var b [24]byte
	w.WriteByte('*')
	w.Write(appendInt(b[:0], int64(n)))
	w.WriteString("\r\n")
}

func appendInt(b []byte, n int64) []byte {
	if n == 0 {
		return append(b, '0')
	}
	var tmp [20]byte
	i := len(tmp)
	u := uint64(n)
	if n < 0 {
		u = uint64(-n)
	}
	for u > 0 {
		i--
		tmp[i] = byte('0' + u%10)
		u /= 10
	}
	if n < 0 {
		b = append(b, '-')
	}
	return append(b, tmp[i:]...)
}
