package http

import (
	"bytes"
	"errors"
	"strconv"
)

// Limits on what a peer may send before the message is refused.
const (
	maxHeaderBytes = 16 << 10
	maxBodyBytes   = 64 << 20
)

var (
	errIncomplete = errors.New("http: incomplete")
	errMalformed  = errors.New("http: malformed message")
	errTooLarge   = errors.New("http: header too large")
)

// request is what the server needs of a request.
type request struct {
	method, path []byte
	gzip         bool // the client accepts gzip
	close        bool // Connection: close, or HTTP/1.0 without keep-alive
	length       int  // bytes of the request, header and body
}

// parseRequest parses one request at the start of b.
func parseRequest(b []byte) (request, error) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) > maxHeaderBytes {
			return request{}, errTooLarge
		}
		return request{}, errIncomplete
	}
	head := b[:end]
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	parts := bytes.Fields(line)
	if len(parts) != 3 || !bytes.HasPrefix(parts[2], []byte("HTTP/1.")) {
		return request{}, errMalformed
	}
	r := request{method: parts[0], path: parts[1], close: bytes.Equal(parts[2], []byte("HTTP/1.0"))}
	body := 0
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return request{}, errMalformed
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Accept-Encoding")):
			r.gzip = bytes.Contains(bytes.ToLower(value), []byte("gzip"))
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				r.close = true
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				r.close = false
			}
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.Atoi(string(value))
			if err != nil || n < 0 || n > maxBodyBytes {
				return request{}, errMalformed
			}
			body = n
		}
	}
	r.length = end + 4 + body
	if len(b) < r.length {
		return request{}, errIncomplete
	}
	return r, nil
}

// response is what the client needs of a response.
type response struct {
	status int
	length int // bytes of the response, header and body
	body   int
}

// parseResponse parses one response (with Content-Length) at the start
// of b.
func parseResponse(b []byte) (response, error) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) > maxHeaderBytes {
			return response{}, errTooLarge
		}
		return response{}, errIncomplete
	}
	line, rest, _ := bytes.Cut(b[:end], []byte("\r\n"))
	parts := bytes.Fields(line)
	if len(parts) < 2 || !bytes.HasPrefix(parts[0], []byte("HTTP/1.")) {
		return response{}, errMalformed
	}
	status, err := strconv.Atoi(string(parts[1]))
	if err != nil {
		return response{}, errMalformed
	}
	r := response{status: status, body: -1}
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := bytes.Cut(h, []byte(":"))
		if ok && bytes.EqualFold(name, []byte("Content-Length")) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
			if err != nil || n < 0 || n > maxBodyBytes {
				return response{}, errMalformed
			}
			r.body = n
		}
	}
	if r.body < 0 {
		return response{}, errMalformed // this client needs Content-Length
	}
	r.length = end + 4 + r.body
	if len(b) < r.length {
		return response{}, errIncomplete
	}
	return r, nil
}
