package oltp

// ParseResponse is the one-shot parse the specs, the fuzz target and the
// benchmark use; the client keeps a resumable responseParser per
// terminal instead.

// ParseResponse parses the response at the start of b (an OK, an ERR or
// a whole text result set) and returns its length. A response not yet
// whole is ErrIncomplete.
func ParseResponse(b []byte) (Response, int, error) {
	var p responseParser
	return p.parse(b)
}
