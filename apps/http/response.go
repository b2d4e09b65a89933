package http

import (
	"bytes"
	"strconv"
)

// response is what the client needs of a response.
type response struct {
	status int
	length int // bytes of the response, header and body
	body   int
}

// responseParser is requestParser's counterpart for responses (with
// Content-Length): it keeps the header's verdict while the body arrives,
// so a large body delivered in k pieces costs O(k) after its header.
type responseParser struct {
	head headScan
	r    response
	// work counts bytes examined and calls, for the linearity specs.
	work uint64
}

// parse parses the response at the start of b: errIncomplete asks for a
// call with more of it.
func (p *responseParser) parse(b []byte) (response, error) {
	p.work++
	if err := p.head.header(b, &p.work, p.parseHead); err != nil {
		if err != errIncomplete {
			p.reset()
		}
		return response{}, err
	}
	if len(b) < p.r.length {
		return response{}, errIncomplete
	}
	r := p.r
	p.reset()
	return r, nil
}

// reset readies the parser for the next message; work goes on counting.
func (p *responseParser) reset() { *p = responseParser{work: p.work} }

// parseHead parses the status line and the Content-Length of the header
// that ends at end (RFC 9112 sections 4 and 6.3).
func (p *responseParser) parseHead(b []byte, end int) error {
	p.work += uint64(end)
	lineEnd, rest := startLine(b, end)
	var w [2]span
	if lineWords(b, lineEnd, w[:]) < 2 || !bytes.HasPrefix(w[0].of(b), []byte("HTTP/1.")) {
		return errMalformed
	}
	status, err := strconv.Atoi(string(w[1].of(b)))
	if err != nil {
		return errMalformed
	}
	r := response{status: status, body: -1}
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := bytes.Cut(h, []byte(":"))
		if ok && bytes.EqualFold(name, []byte("Content-Length")) {
			n, ok := contentLength(bytes.TrimSpace(value))
			if !ok {
				return errMalformed
			}
			r.body = n
		}
	}
	if r.body < 0 {
		return errMalformed // this client needs Content-Length
	}
	r.length = end + len(headerEnd) + r.body
	p.r = r
	return nil
}
