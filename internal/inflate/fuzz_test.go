package inflate_test

import (
	"bytes"
	stdflate "compress/flate"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/flate"

	"github.com/savanna-sim/savanna/internal/inflate"
)

// FuzzDecode feeds arbitrary bytes, in pieces chosen by the seed, to the
// decoder: it must never panic, its Status must agree with what each call
// did, and whenever Go's compress/flate accepts the stream the decoder
// must produce the same bytes.
func FuzzDecode(f *testing.F) {
	for i, lvl := range []int{0, 1, 6, 9, flate.HuffmanOnly} {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, lvl)
		_, _ = w.Write(bytes.Repeat([]byte("zlibshim fuzz seed 0123456789 "), 40+i))
		_ = w.Flush()
		_, _ = w.Write([]byte("tail"))
		_ = w.Close()
		f.Add(b.Bytes(), uint64(i))
	}
	f.Add([]byte{0x03, 0x00}, uint64(7))
	f.Add([]byte{0x07}, uint64(8))
	f.Add([]byte("10"), uint64(9)) // a final stored header cut short
	f.Fuzz(func(t *testing.T, src []byte, seed uint64) {
		want, werr := io.ReadAll(io.LimitReader(stdflate.NewReader(bytes.NewReader(src)), 1<<18))
		r := rand.New(rand.NewPCG(seed, seed>>7))
		var z inflate.Decoder
		var got []byte
		buf := make([]byte, 4096)
		in := src
		var err error
		for steps := 0; steps < 1<<18 && len(got) <= 1<<18; steps++ {
			piece := in[:min(len(in), r.IntN(64))]
			dst := buf[:1+r.IntN(len(buf))]
			nd, ns, e := z.Decode(dst, piece)
			got = append(got, dst[:nd]...)
			in = in[ns:]
			switch st := z.Status(); {
			case (st == inflate.Corrupt) != (e != nil):
				t.Fatalf("status %v with error %v", st, e)
			case (st == inflate.StreamEnd) != z.Done():
				t.Fatalf("status %v with Done %v", st, z.Done())
			case st == inflate.NeedInput && ns != len(piece):
				t.Fatalf("needs input having taken %d of %d bytes", ns, len(piece))
			case st == inflate.DstFull && nd != len(dst):
				t.Fatalf("destination full having written %d of %d bytes", nd, len(dst))
			}
			if e != nil {
				if !errors.Is(e, inflate.ErrCorrupt) {
					t.Fatalf("error %v does not wrap ErrCorrupt", e)
				}
				err = e
				break
			}
			if z.Done() || (len(in) == 0 && nd == 0 && len(piece) == 0) {
				break
			}
		}
		if werr == nil && len(want) < 1<<18 {
			if err != nil || !z.Done() {
				t.Fatalf("compress/flate decoded %d bytes; decoder: done=%v err=%v", len(want), z.Done(), err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("output differs from compress/flate (%d vs %d bytes)", len(got), len(want))
			}
		}
		if z.Done() && werr != nil {
			// compress/flate reads no byte past the final block, so a
			// stream it finds truncated or corrupt is not a whole one.
			t.Fatalf("decoder accepted a stream compress/flate rejects: %v", werr)
		}
	})
}
