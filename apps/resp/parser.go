package resp

import (
	"unicode"
	"unicode/utf8"
)

// BigArg is the length from which a bulk argument gets an allocation of
// its own, exactly its announced size, made once when its header arrives
// (Redis's PROTO_MBULK_BIG_ARG, server.h, 32 KiB): its bytes are then
// read straight into place (Parser.Direct), and a store may keep that
// allocation as the value instead of copying it (Store.ExecuteOwned).
// Shorter arguments share one buffer per command, as Redis copies them
// out of its query buffer.
const BigArg = 32 << 10

// Budget grants a Parser's allocations, so that a server can bound the
// memory its clients make it hold. Reserve is called before every
// allocation for a command; an error refuses it, and the parser fails
// with that error (a refused command cannot continue). Release gives
// back what was reserved, when the parser drops an allocation.
type Budget interface {
	Reserve(n int) error
	Release(n int)
}

// Sizes the parser charges to its Budget for what it keeps per argument:
// the argument's slice header in Args and its span (offset and length)
// in the parser's own index.
const (
	argHeaderBytes = 24
	spanBytes      = 16
)

// keepArena and keepArgs bound what a Parser keeps between commands: a
// larger buffer, grown for one large command, is dropped so that it does
// not stay pinned for the connection's life.
const (
	keepArena = 16 << 10
	keepArgs  = 1024
)

// parserState is where a Parser is in a request.
type parserState uint8

const (
	stStart   parserState = iota // before a request's first byte
	stInline                     // inside an inline line
	stArray                      // inside the "*<n>" header line
	stElem                       // inside a "$<n>" header line
	stPayload                    // inside a bulk string's bytes
	stTrailer                    // inside the CRLF after a bulk string
	stDone                       // a request is complete: Args until Next
	stFailed                     // a protocol error or refusal: sticky
)

// span locates one argument: in the shared arena (off >= 0), or the
// big allocation bigs[-1-off].
type span struct{ off, n int }

// Parser is a resumable parser of requests (RESP arrays of bulk strings
// and inline commands) for a stream that arrives in pieces. It keeps its
// position across calls (the array header seen, the arguments complete
// so far, the bulk length announced and how much of it has come), so a
// request fed in any number of pieces costs work linear in its size:
// every byte is examined once (Examined counts them). It accepts and
// refuses exactly what ParseCommandLimits does on the whole buffer, with
// the same messages (a fuzz target checks it).
//
// A Parser owns the bytes of the arguments it returns: a short argument
// lives in a per-request buffer the parser reuses, a big one (BigArg or
// longer) in an allocation made once, exactly its size, that the parser
// forgets at Next, so that a consumer may keep it. The zero value is not
// usable: use NewParser.
type Parser struct {
	lim    Limits
	budget Budget
	bigArg int // BigArg; a spec makes it small to reach the big path
	st     parserState
	err    error

	hdr  [headerMax + 2]byte // the header line so far, without its LF
	hlen int                 // bytes of the current line seen (header or inline)

	want    int    // elements still to come in the array
	bulk    int    // announced length of the current bulk string
	got     int    // bytes of it received
	big     []byte // the current big argument's allocation, or nil
	trailer [2]byte

	arena []byte   // short arguments, or the inline line
	spans []span   // one per argument so far
	bigs  [][]byte // big arguments of this request
	args  [][]byte // the result, built when the request completes

	held     int    // bytes reserved from budget
	examined uint64 // bytes looked at, over the parser's life
}

// NewParser returns a parser under lim (zero fields take DefaultLimits)
// that reserves its allocations from b; a nil b grants everything.
func NewParser(lim Limits, b Budget) *Parser {
	return &Parser{lim: lim.withDefaults(), budget: b, bigArg: BigArg}
}

// Examined returns the bytes the parser has looked at since it was made:
// each input byte once, however the input was split.
func (p *Parser) Examined() uint64 { return p.examined }

// Held returns the bytes the parser holds now, all reserved from its
// budget.
func (p *Parser) Held() int { return p.held }

// InRequest reports whether part of a request has been fed and the
// request is not complete: an end of stream there is unexpected.
func (p *Parser) InRequest() bool { return p.st != stStart && p.st != stDone }

// Args returns the complete request's arguments (none for an empty
// inline line or a "*0" or "*-1" array, which a server skips, as Redis
// does). They stay valid until Next; Next forgets big arguments without
// touching them, so a consumer may keep those.
func (p *Parser) Args() [][]byte {
	if p.st != stDone {
		return nil
	}
	return p.args
}

// Feed parses the bytes of b from where the last call stopped and
// returns how many it consumed and whether a request is complete (then
// it stops there: call Args, then Next, then Feed the rest). An
// incomplete request consumes all of b. A protocol error is a
// *ProtocolError, a refused reservation the Budget's error; either is
// final: Feed returns it again.
func (p *Parser) Feed(b []byte) (int, bool, error) {
	off := 0
	for off < len(b) && p.st != stDone && p.st != stFailed {
		n, err := p.step(b[off:])
		off += n
		if err != nil {
			p.st, p.err = stFailed, err
		}
	}
	switch p.st {
	case stDone:
		return off, true, nil
	case stFailed:
		return off, false, p.err
	}
	return off, false, nil
}

// Direct returns the part of the current big argument that has not
// arrived yet, so that a reader can read the stream straight into it
// (then call Advance), or nil when the parser is not inside one.
func (p *Parser) Direct() []byte {
	if p.st != stPayload || p.big == nil {
		return nil
	}
	return p.big[p.got:]
}

// Advance records that n bytes were read into Direct's slice.
func (p *Parser) Advance(n int) {
	if p.st != stPayload || p.big == nil || n < 0 || n > p.bulk-p.got {
		panic("resp: Parser.Advance outside Direct's slice")
	}
	p.examined += uint64(n)
	p.got += n
	if p.got == p.bulk {
		p.st = stTrailer
		p.hlen = 0
	}
}

// Next forgets the complete request (or, after an error, the part seen)
// and gets ready for the next one: big arguments are dropped, short ones'
// buffer kept for reuse unless a large request grew it.
func (p *Parser) Next() {
	for i := range p.bigs {
		p.release(cap(p.bigs[i]))
		p.bigs[i] = nil
	}
	p.bigs = p.bigs[:0]
	if p.big != nil {
		p.release(cap(p.big))
		p.big = nil
	}
	if cap(p.arena) > keepArena {
		p.release(cap(p.arena))
		p.arena = nil
	}
	p.arena = p.arena[:0]
	if cap(p.spans) > keepArgs {
		p.release(cap(p.spans) * (spanBytes + 2*argHeaderBytes))
		p.spans, p.args, p.bigs = nil, nil, nil
	}
	clear(p.args[:cap(p.args)])
	p.spans, p.args = p.spans[:0], p.args[:0]
	p.st, p.err, p.hlen, p.want = stStart, nil, 0, 0
}

// Free drops everything the parser holds; it may be used again.
func (p *Parser) Free() {
	p.Next()
	p.release(cap(p.arena) + cap(p.spans)*(spanBytes+2*argHeaderBytes))
	p.arena, p.spans, p.args, p.bigs = nil, nil, nil, nil
}

func (p *Parser) reserve(n int) error {
	if n <= 0 {
		return nil
	}
	if p.budget != nil {
		if err := p.budget.Reserve(n); err != nil {
			return err
		}
	}
	p.held += n
	return nil
}

func (p *Parser) release(n int) {
	if n <= 0 {
		return
	}
	p.held -= n
	if p.budget != nil {
		p.budget.Release(n)
	}
}

// step makes progress on b (not empty) and returns the bytes consumed.
func (p *Parser) step(b []byte) (int, error) {
	switch p.st {
	case stStart:
		p.hlen = 0
		if b[0] == '*' {
			p.st = stArray
		} else {
			p.st = stInline
		}
		return 0, nil
	case stInline:
		return p.inline(b)
	case stArray:
		return p.header(b, p.arrayHeader)
	case stElem:
		if p.hlen == 0 {
			// A header that cannot be a bulk string fails at once,
			// without waiting for its line (as ParseCommandLimits).
			if c := b[0]; c != '$' && c != '\r' && c != '\n' {
				p.examined++
				return 1, protoErr("expected '$', got '%c'", c)
			}
		}
		return p.header(b, p.bulkHeader)
	case stPayload:
		dst := p.big
		if dst == nil {
			dst = p.arena[len(p.arena)-p.bulk:]
		}
		n := copy(dst[p.got:], b)
		p.examined += uint64(n)
		p.got += n
		if p.got == p.bulk {
			p.st, p.hlen = stTrailer, 0
		}
		return n, nil
	case stTrailer:
		p.trailer[p.hlen] = b[0]
		p.hlen++
		p.examined++
		if p.hlen < 2 {
			return 1, nil
		}
		if p.trailer != [2]byte{'\r', '\n'} {
			return 1, protoErr("bulk string not terminated by CRLF")
		}
		p.endArg()
		return 1, nil
	}
	return 0, nil
}

// scanLine finds the LF that ends a line of which have bytes were seen,
// in b, under the rule of ParseCommandLimits's line: a line may hold up
// to max+1 bytes before its LF; a byte past that without an LF is an
// error, even before the LF arrives. It returns the bytes of b that
// belong to the line (with its LF) and whether the line ended.
func (p *Parser) scanLine(b []byte, max int) (int, bool, error) {
	room := max + 2 - p.hlen
	look := b[:min(len(b), room)]
	for i, c := range look {
		if c == '\n' {
			p.examined += uint64(i + 1)
			return i + 1, true, nil
		}
	}
	p.examined += uint64(len(look))
	if len(b) > room {
		return len(look), false, protoErr("too big inline request")
	}
	return len(b), false, nil
}

// header collects a header line into hdr and hands the complete line,
// without its LF and a CR before it, to done.
func (p *Parser) header(b []byte, done func([]byte) error) (int, error) {
	n, ended, err := p.scanLine(b, headerMax)
	if err != nil {
		return n, err
	}
	body := b[:n]
	if ended {
		body = body[:n-1]
	}
	p.hlen += copy(p.hdr[p.hlen:], body)
	if !ended {
		return n, nil
	}
	l := p.hdr[:p.hlen]
	if len(l) > 0 && l[len(l)-1] == '\r' {
		l = l[:len(l)-1]
	}
	p.hlen = 0
	return n, done(l)
}

func (p *Parser) arrayHeader(l []byte) error {
	n, ok := parseLen(l[1:])
	if !ok || n > p.lim.MaxArgs {
		return protoErr("invalid multibulk length")
	}
	if n <= 0 {
		p.finish()
		return nil
	}
	p.want = n
	p.st = stElem
	return nil
}

func (p *Parser) bulkHeader(h []byte) error {
	if len(h) == 0 || h[0] != '$' {
		c := byte(' ')
		if len(h) > 0 {
			c = h[0]
		}
		return protoErr("expected '$', got '%c'", c)
	}
	l, ok := parseLen(h[1:])
	if !ok || l < 0 || l > p.lim.MaxBulk {
		return protoErr("invalid bulk length")
	}
	if err := p.growSpans(p.want); err != nil {
		return err
	}
	p.bulk, p.got = l, 0
	if l >= p.bigArg {
		// Allocated once, at its announced size, and read into.
		if err := p.reserve(l); err != nil {
			return err
		}
		p.big = make([]byte, l)
		p.spans = append(p.spans, span{off: -1 - len(p.bigs), n: l})
	} else {
		if err := p.growArena(len(p.arena)+l, 0); err != nil {
			return err
		}
		p.spans = append(p.spans, span{off: len(p.arena), n: l})
		p.arena = p.arena[:len(p.arena)+l]
	}
	p.st = stPayload
	if l == 0 {
		p.st = stTrailer
	}
	return nil
}

// endArg closes the current bulk string.
func (p *Parser) endArg() {
	if p.big != nil {
		p.bigs = append(p.bigs, p.big)
		p.big = nil
	}
	p.hlen = 0
	p.want--
	if p.want == 0 {
		p.finish()
		return
	}
	p.st = stElem
}

// growSpans makes room for one more argument in spans, args and bigs,
// growing them as Redis grows argv (networking.c processMultibulkBuffer):
// at most 1024 at first, then doubling, never past the count announced
// (remaining is the arguments still to come, this one included), so
// that a large announced count costs memory only as arguments come.
func (p *Parser) growSpans(remaining int) error {
	c := cap(p.spans)
	if len(p.spans) < c {
		return nil
	}
	nc := min(remaining, keepArgs)
	if c > 0 {
		nc = min(2*c, c+remaining)
	}
	return p.resizeSpans(max(nc, c+1))
}

// resizeSpans gives spans, args and bigs the capacity nc.
func (p *Parser) resizeSpans(nc int) error {
	per := spanBytes + 2*argHeaderBytes
	if err := p.reserve(nc * per); err != nil {
		return err
	}
	old := cap(p.spans)
	p.spans = append(make([]span, 0, nc), p.spans...)
	p.args = make([][]byte, 0, nc)
	p.bigs = append(make([][]byte, 0, nc), p.bigs...)
	p.release(old * per)
	return nil
}

// growArena makes the arena's capacity at least need (at most limit
// when limit > 0), doubling so that a request's copies stay linear.
func (p *Parser) growArena(need, limit int) error {
	if need <= cap(p.arena) {
		return nil
	}
	nc := max(need, 2*cap(p.arena), 256)
	if limit > 0 {
		nc = max(need, min(nc, limit))
	}
	if err := p.reserve(nc); err != nil {
		return err
	}
	old := cap(p.arena)
	p.arena = append(make([]byte, 0, nc), p.arena...)
	p.release(old)
	return nil
}

// finish builds Args from the spans.
func (p *Parser) finish() {
	p.args = p.args[:0]
	for _, s := range p.spans {
		if s.off < 0 {
			p.args = append(p.args, p.bigs[-1-s.off])
		} else {
			p.args = append(p.args, p.arena[s.off:s.off+s.n:s.off+s.n])
		}
	}
	p.st = stDone
}

// inline collects an inline line in the arena; once it ends, its words
// (split as bytes.Fields splits, as ParseCommandLimits does) are the
// arguments.
func (p *Parser) inline(b []byte) (int, error) {
	n, ended, err := p.scanLine(b, p.lim.MaxInline)
	if err != nil {
		return n, err
	}
	if err := p.growArena(len(p.arena)+n, p.lim.MaxInline+2); err != nil {
		return n, err
	}
	p.arena = append(p.arena, b[:n]...)
	p.hlen += n
	if !ended {
		return n, nil
	}
	l := p.arena[:len(p.arena)-1]
	if len(l) > 0 && l[len(l)-1] == '\r' {
		l = l[:len(l)-1]
	}
	count := 0
	eachField(l, func(int, int) { count++ })
	if count > p.lim.MaxArgs {
		return n, protoErr("invalid multibulk length")
	}
	if count > cap(p.spans) {
		if err := p.resizeSpans(count); err != nil {
			return n, err
		}
	}
	eachField(l, func(i, j int) { p.spans = append(p.spans, span{off: i, n: j - i}) })
	p.finish()
	return n, nil
}

// eachField calls f with the bounds of every word of l, split around
// runs of Unicode white space as bytes.Fields splits, without allocating.
func eachField(l []byte, f func(i, j int)) {
	start := -1
	for i := 0; i < len(l); {
		r, size := rune(l[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(l[i:])
		}
		if unicode.IsSpace(r) {
			if start >= 0 {
				f(start, i)
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		f(start, len(l))
	}
}
