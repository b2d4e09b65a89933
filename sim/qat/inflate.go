package qat

import (
	"errors"

	"github.com/savanna-sim/savanna/internal/inflate"
)

// inflater is one decompression stream of a queue pair (or the codec's
// stateless scratch): internal/inflate's resumable decoder, which can stop
// at any input byte and any output byte and continue with the next op's
// bytes, as QAT's stateful decompression does, read into the terms of an
// op's result. Input that does not complete a decoding unit is held inside
// the decoder and counted as consumed, as the device keeps it in its
// stream state.
type inflater struct {
	dec inflate.Decoder
}

func newInflater() *inflater { return &inflater{} }

// reset starts a new stream. A nil inflater (a queue pair that never
// decompressed) is left alone.
func (f *inflater) reset() {
	if f == nil {
		return
	}
	f.dec.Reset()
}

// done reports whether the stream's final block has ended.
func (f *inflater) done() bool { return f.dec.Done() }

// inflateResult is what one call did.
type inflateResult struct {
	consumed, produced int
	done               bool   // the final block ended
	outFull            bool   // stopped because dst is full
	err                error  // the stream is corrupt
	reason             string // what was corrupt, for op.Debug
}

// inflate decodes src into dst, continuing the stream.
func (f *inflater) inflate(src, dst []byte) inflateResult {
	nd, ns, err := f.dec.Decode(dst, src)
	res := inflateResult{consumed: ns, produced: nd}
	switch f.dec.Status() {
	case inflate.Corrupt:
		res.err = err
		res.reason = err.Error()
		var ce *inflate.CorruptError
		if errors.As(err, &ce) {
			res.reason = ce.Reason
		}
	case inflate.StreamEnd:
		// Whole bytes the decoder took in past the end are the next
		// thing's (a gzip trailer): give back those that came from this
		// op's source; what was left of the last byte is padding.
		res.done = true
		res.consumed = max(0, ns-len(f.dec.Rest()))
	case inflate.DstFull:
		res.outFull = true
	}
	return res
}

// maxDist is the farthest distance the stream decoded, for tests of
// windows.
func (f *inflater) maxDist() int { return f.dec.MaxDistance() }
