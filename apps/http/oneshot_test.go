package http

// The one-shot parses the specs use: a whole message in one buffer,
// through the resumable parsers the server and wrk keep per connection.

// parseRequest parses one request at the start of b.
func parseRequest(b []byte) (request, error) {
	var p requestParser
	return p.parse(b)
}

// parseResponse parses one response (with Content-Length) at the start
// of b.
func parseResponse(b []byte) (response, error) {
	var p responseParser
	return p.parse(b)
}
