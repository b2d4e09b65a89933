package qat

import "errors"

// InflateForTest decodes a whole raw deflate stream with the model's
// inflater, feeding it in pieces of every size from 1 byte up, and returns
// the output and the farthest distance it used.
func InflateForTest(b []byte) ([]byte, int, error) {
	f := newInflater()
	var out []byte
	dst := make([]byte, 4096)
	step := 1
	for iter := 0; ; iter++ {
		if iter > 1<<22 {
			return out, f.maxDist(), errors.New("no progress")
		}
		n := min(step, len(b))
		res := f.inflate(b[:n], dst)
		out = append(out, dst[:res.produced]...)
		if res.err != nil {
			return out, f.maxDist(), res.err
		}
		b = b[res.consumed:]
		if res.done {
			return out, f.maxDist(), nil
		}
		if len(b) == 0 && !res.outFull {
			return out, f.maxDist(), errors.New("stream ends before its final block")
		}
		step = step%7919 + 1
	}
}
