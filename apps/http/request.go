package http

import "bytes"

// request is what the server needs of a request.
type request struct {
	method, path []byte
	gzip         bool // the client accepts gzip
	close        bool // Connection: close, or HTTP/1.0 without keep-alive
	length       int  // bytes of the request, header and body
}

// requestParser parses the request at the start of a buffer that grows
// between calls: each call is given the same message with more of it, as
// a connection's input is while the request arrives. It keeps how far it
// has searched for the header's end and, once the header is parsed, what
// it said, so a request delivered in k pieces costs O(size + k) rather
// than a parse from byte 0 per piece. The bytes before the header's end
// must not change between calls (the buffer may move or grow). After a
// request or an error it is ready for the next message.
type requestParser struct {
	head         headScan
	method, path span
	gzip, close  bool
	length       int
	// work counts bytes examined and calls, for the specs that check a
	// request costs linear work whatever pieces it comes in.
	work uint64
}

// parse parses the request at the start of b: errIncomplete asks for a
// call with more of it.
func (p *requestParser) parse(b []byte) (request, error) {
	p.work++
	if err := p.head.header(b, &p.work, p.parseHead); err != nil {
		if err != errIncomplete {
			p.reset()
		}
		return request{}, err
	}
	if len(b) < p.length {
		return request{}, errIncomplete
	}
	r := request{method: p.method.of(b), path: p.path.of(b), gzip: p.gzip, close: p.close, length: p.length}
	p.reset()
	return r, nil
}

// reset readies the parser for the next message; work goes on counting.
func (p *requestParser) reset() { *p = requestParser{work: p.work} }

// parseHead parses the request line and the fields of the header that
// ends at end (RFC 9112 sections 3 and 5).
func (p *requestParser) parseHead(b []byte, end int) error {
	p.work += uint64(end)
	lineEnd, rest := startLine(b, end)
	var w [3]span
	if lineWords(b, lineEnd, w[:]) != 3 || !bytes.HasPrefix(w[2].of(b), []byte("HTTP/1.")) {
		return errMalformed
	}
	p.method, p.path = w[0], w[1]
	p.close = bytes.Equal(w[2].of(b), []byte("HTTP/1.0"))
	body := 0
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return errMalformed
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Accept-Encoding")):
			p.gzip = containsFold(value, "gzip")
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				p.close = true
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				p.close = false
			}
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := contentLength(value)
			if !ok {
				return errMalformed
			}
			body = n
		}
	}
	p.length = end + len(headerEnd) + body
	return nil
}

// containsFold reports whether s holds the lower-case ASCII word sub in
// any case, without the copy a ToLower would make.
func containsFold(s []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if bytes.EqualFold(s[i:i+len(sub)], []byte(sub)) {
			return true
		}
	}
	return false
}
