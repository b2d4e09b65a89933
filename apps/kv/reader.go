package kv

import (
	"io"

	"github.com/savanna-sim/savanna/apps/resp"
)

// ProtocolError is a malformed request (resp.ProtocolError): the server
// replies "-ERR Protocol error: <Msg>" and closes the connection.
type ProtocolError = resp.ProtocolError

// readBufSize is a connection's read buffer: what one read takes from
// the stream when the parser is not inside a big argument (a big
// argument is read straight into its own allocation).
const readBufSize = 4 << 10

// Reader reads commands from a stream with a resumable parser
// (resp.Parser): a command that arrives in pieces is parsed once, a big
// argument is allocated once at its announced length, within the
// parser's budget, and read into place, and the reader holds a read
// buffer of readBufSize besides.
type Reader struct {
	r        io.Reader
	p        *resp.Parser
	buf      []byte
	off, n   int   // the unparsed bytes are buf[off:n]
	err      error // a read error to return once buf is drained
	returned bool  // a command was returned and not yet released
}

// newReader returns a Reader over r with limits lim (zero fields take
// defaults), that reserves its parser's memory from b (none if nil) and
// reads into buf.
func newReader(r io.Reader, lim Limits, b resp.Budget, buf []byte) *Reader {
	lim = lim.WithDefaults()
	return &Reader{r: r, buf: buf,
		p: resp.NewParser(resp.Limits{MaxArgs: lim.MaxArgs, MaxBulk: lim.MaxBulk, MaxInline: lim.MaxInline}, b)}
}

// Buffered returns the bytes read from the stream and not yet parsed: a
// server flushes its replies when it is zero (the pipeline is drained).
func (rd *Reader) Buffered() int { return rd.n - rd.off }

// Examined returns the bytes the parser has looked at, a count of its
// work: each byte of the stream once.
func (rd *Reader) Examined() uint64 { return rd.p.Examined() }

// ReadCommand reads one command and returns its arguments, valid until
// the next call (or Release). It returns io.EOF at a clean end of
// stream, io.ErrUnexpectedEOF inside a command, a *ProtocolError on
// malformed input, the budget's error when it refused memory, and an
// empty slice for an empty inline line or a "*0"/"*-1" array (which the
// caller skips, as Redis does).
func (rd *Reader) ReadCommand() ([][]byte, error) {
	rd.Release()
	for {
		if rd.off < rd.n {
			k, done, err := rd.p.Feed(rd.buf[rd.off:rd.n])
			rd.off += k
			if err != nil {
				return nil, err
			}
			if done {
				rd.returned = true
				return rd.p.Args(), nil
			}
		}
		if rd.err != nil {
			return nil, rd.endError()
		}
		// A big argument's bytes go straight into place.
		if d := rd.p.Direct(); len(d) > len(rd.buf) {
			k, err := rd.r.Read(d)
			rd.p.Advance(k)
			rd.err = err
			continue
		}
		k, err := rd.r.Read(rd.buf)
		rd.off, rd.n, rd.err = 0, k, err
	}
}

func (rd *Reader) endError() error {
	if rd.err == io.EOF && rd.p.InRequest() {
		return io.ErrUnexpectedEOF
	}
	return rd.err
}

// Release forgets the command ReadCommand returned: its arguments are
// invalid from now on, and the parser's memory for it is released to
// its budget (a server does it when the store has taken what it keeps).
func (rd *Reader) Release() {
	if rd.returned {
		rd.p.Next()
		rd.returned = false
	}
}

// free releases everything the parser holds.
func (rd *Reader) free() { rd.p.Free() }
