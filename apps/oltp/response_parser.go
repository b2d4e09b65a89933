package oltp

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// maxColumns is the most columns a result set may have: MySQL's
// MAX_FIELDS (sql/sql_const.h), the limit of a table and of a select
// list.
const maxColumns = 4096

// Phases of a response being parsed.
const (
	phaseFirst = iota // the first packet: OK, ERR or a column count
	phaseDefs         // column definitions, then an EOF
	phaseRows         // rows until the closing EOF or an ERR
)

// responseParser parses the response at the start of a buffer that grows
// between calls (the same response, more of it each time, as a
// connection's input while a result set arrives). It keeps the packets it
// has parsed and what they said, so a result set delivered in k pieces
// costs O(packets + k), not a parse from its first packet per piece. The
// bytes it has parsed must not change between calls (the buffer may move
// or grow). After a response or an error it is ready for the next one.
type responseParser struct {
	off   int // bytes of the response in the packets parsed so far
	phase int
	defs  int // column definitions (and the EOF) parsed
	r     Response
	// work counts the bytes examined and the calls, for the specs that
	// check a result set costs linear work whatever pieces it comes in.
	work uint64
}

// parse parses the response at the start of b; ErrIncomplete asks for a
// call with more of it.
func (p *responseParser) parse(b []byte) (Response, int, error) {
	p.work++
	r, n, err := p.resume(b)
	if !errors.Is(err, ErrIncomplete) {
		*p = responseParser{work: p.work}
	}
	return r, n, err
}

// packet parses the packet after those parsed so far.
func (p *responseParser) packet(b []byte) (Packet, int, error) {
	p.work += HeaderLen
	return ParsePacket(b[p.off:])
}

func (p *responseParser) resume(b []byte) (Response, int, error) {
	if p.phase == phaseFirst {
		pk, n, err := p.packet(b)
		if err != nil {
			return Response{}, 0, err
		}
		pl := pk.Payload()
		if len(pl) == 0 {
			return Response{}, 0, fmt.Errorf("%w: empty response packet", ErrMalformed)
		}
		switch pl[0] {
		case respOK:
			return Response{Kind: ResponseOK}, n, nil
		case respERR:
			if len(pl) < 3 {
				return Response{}, 0, fmt.Errorf("%w: ERR packet of %d bytes", ErrMalformed, len(pl))
			}
			return Response{Kind: ResponseError, ErrorCode: binary.LittleEndian.Uint16(pl[1:3])}, n, nil
		}
		cols, m, err := ParseLenEnc(pl)
		if err != nil || m != len(pl) || cols == 0 || cols > maxColumns {
			return Response{}, 0, fmt.Errorf("%w: bad column count", ErrMalformed)
		}
		p.r = Response{Kind: ResponseResultSet, Columns: int(cols)}
		p.off, p.phase = n, phaseDefs
	}
	// Column definitions, then an EOF.
	for p.phase == phaseDefs {
		pk, n, err := p.packet(b)
		if err != nil {
			return Response{}, 0, err
		}
		p.off += n
		if p.defs == p.r.Columns {
			if !isEOF(pk) {
				return Response{}, 0, fmt.Errorf("%w: no EOF after %d column definitions", ErrMalformed, p.r.Columns)
			}
			p.phase = phaseRows
		}
		p.defs++
	}
	// Rows until the closing EOF (or an ERR that ends the set early).
	for {
		pk, n, err := p.packet(b)
		if err != nil {
			return Response{}, 0, err
		}
		p.off += n
		if isEOF(pk) {
			return p.r, p.off, nil
		}
		if pl := pk.Payload(); len(pl) > 0 && pl[0] == respERR {
			p.r.Kind = ResponseError
			return p.r, p.off, nil
		}
		p.r.Rows++
	}
}
