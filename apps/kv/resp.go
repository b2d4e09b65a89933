package kv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/savanna-sim/savanna/apps/resp"
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

// ProtocolError is a malformed request (resp.ProtocolError): the server
// replies "-ERR Protocol error: <Msg>" and closes the connection.
type ProtocolError = resp.ProtocolError

// minRead is the least free room a Reader offers the stream per read.
const minRead = 4 << 10

// keepBuf is the buffer capacity a Reader keeps between commands; after a
// larger command it drops the big buffer so that one large value does
// not pin its memory for the connection's life.
const keepBuf = 64 << 10

// Reader parses commands from a stream with resp.ParseCommandLimits,
// reading more whenever a command is incomplete. Its buffer grows only as
// bytes arrive, so a large announced length costs memory only once the
// bytes come.
type Reader struct {
	r   *bufio.Reader
	lim resp.Limits
	buf []byte
	off int // start of the unparsed bytes in buf
}

// NewReader returns a Reader over r with limits lim (zero fields take
// defaults).
func NewReader(r *bufio.Reader, lim Limits) *Reader {
	lim = lim.WithDefaults()
	return &Reader{r: r, lim: resp.Limits{MaxArgs: lim.MaxArgs, MaxBulk: lim.MaxBulk, MaxInline: lim.MaxInline}}
}

// Buffered returns the bytes read from the stream and not yet parsed: a
// server flushes its replies when it is zero (the pipeline is drained).
func (p *Reader) Buffered() int { return len(p.buf) - p.off + p.r.Buffered() }

// ReadCommand reads one command and returns its arguments, appended to
// args[:0]; they are valid until the next call. It returns io.EOF at a
// clean end of stream, io.ErrUnexpectedEOF inside a command, a
// *ProtocolError on malformed input, and an empty slice for an empty
// inline line or a "*0"/"*-1" array (which the caller skips, as Redis
// does).
func (p *Reader) ReadCommand(args [][]byte) ([][]byte, error) {
	for {
		if p.off < len(p.buf) {
			a, n, err := resp.ParseCommandLimits(p.buf[p.off:], args, p.lim)
			if err == nil {
				p.off += n
				return a, nil
			}
			if !errors.Is(err, resp.ErrIncomplete) {
				return a[:0], err
			}
			args = a
		}
		if err := p.fill(); err != nil {
			if err == io.EOF && len(p.buf) > p.off {
				err = io.ErrUnexpectedEOF
			}
			return args[:0], err
		}
	}
}

// fill moves the unparsed bytes to the front of the buffer and reads at
// least one more byte from the stream.
func (p *Reader) fill() error {
	pending := p.buf[p.off:]
	if cap(p.buf) > keepBuf && len(pending) < keepBuf/2 {
		p.buf = append(make([]byte, 0, keepBuf), pending...)
	} else {
		p.buf = p.buf[:copy(p.buf, pending)]
	}
	p.off = 0
	if cap(p.buf)-len(p.buf) < minRead {
		// Double, so that a large command costs few copies.
		p.buf = slices.Grow(p.buf, max(minRead, len(p.buf)))
	}
	for {
		n, err := p.r.Read(p.buf[len(p.buf):cap(p.buf)])
		p.buf = p.buf[:len(p.buf)+n]
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
