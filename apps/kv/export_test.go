package kv

import "io"

// NewReader returns a Reader over r with limits lim (zero fields take
// defaults) and no memory budget, for the specs and the fuzz target.
func NewReader(r io.Reader, lim Limits) *Reader {
	return newReader(r, lim, nil, make([]byte, readBufSize))
}
