package zlibshim_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"strings"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/zlibshim"
)

// corpusItem is one input of the round-trip specs.
type corpusItem struct {
	name string
	data []byte
}

func textOf(r *rand.Rand, n int, words []string) []byte {
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.Bytes()[:n]
}

// corpus builds the inputs deterministically. big adds the 16 MiB one.
func corpus(big bool) []corpusItem {
	r := rand.New(rand.NewPCG(8, 8))
	text := textOf(r, 200_000, []string{"the ", "quick ", "brown ", "fox ", "jumps ", "over ", "lazy ", "dogs. ", "Tengine ", "gzip ", "QAT\n"})
	html := textOf(r, 150_000, []string{"<div class=\"item\">", "</div>\n", "<a href=\"/x/", "\">link</a>", "<p>", "</p>", "<span>", "price: 12.50", "</span>"})
	json := textOf(r, 120_000, []string{`{"id":`, `"name":"`, `gazelle`, `","tags":["a","b"],`, `"n":12345}`, `,`, "\n", `"ok":true`})
	bin := make([]byte, 100_000)
	for i := range bin {
		bin[i] = byte(i*i>>3) ^ byte(r.IntN(4))
	}
	noise := make([]byte, 90_000)
	for i := range noise {
		noise[i] = byte(r.UintN(256))
	}
	k64 := textOf(r, 64<<10+1, []string{"sixty-four ", "kilobytes ", "boundary ", "\n"})
	items := []corpusItem{
		{"text", text}, {"html", html}, {"json", json}, {"binary", bin}, {"incompressible", noise},
		{"empty", []byte{}}, {"one byte", []byte{'x'}},
		{"64KiB-1", k64[:64<<10-1]}, {"64KiB", k64[:64<<10]}, {"64KiB+1", k64},
	}
	if big {
		items = append(items, corpusItem{"16MiB", textOf(r, 16<<20, []string{"sixteen ", "mebibytes ", "of ", "text ", "and ", "numbers ", "0123 ", "\n", string(noise[:64])})})
	}
	return items
}

// deflateAll compresses data through the zlib API: input in pieces of
// inStep bytes, output space of outStep bytes, the flush mode after each
// piece, then Finish.
func deflateAll(d *zlibshim.Deflater, data []byte, flush zlibshim.Flush, inStep, outStep int) ([]byte, error) {
	var out bytes.Buffer
	buf := make([]byte, outStep)
	run := func(in []byte, f zlibshim.Flush) error {
		d.NextIn = in
		for {
			d.NextOut = buf
			err := d.Deflate(f)
			out.Write(buf[:len(buf)-len(d.NextOut)])
			switch {
			case errors.Is(err, zlibshim.ErrStreamEnd):
				return nil
			case errors.Is(err, zlibshim.ErrBuf):
				if len(d.NextIn) == 0 && f != zlibshim.Finish {
					return nil
				}
				return fmt.Errorf("no progress with %d input left: %w", len(d.NextIn), err)
			case err != nil:
				return err
			}
			if len(d.NextIn) == 0 && len(d.NextOut) > 0 && f != zlibshim.Finish {
				return nil
			}
		}
	}
	for len(data) > 0 {
		n := min(len(data), inStep)
		if err := run(data[:n], flush); err != nil {
			return out.Bytes(), err
		}
		data = data[n:]
	}
	if err := run(nil, zlibshim.Finish); err != nil {
		return out.Bytes(), err
	}
	return out.Bytes(), nil
}

// goInflate reads a stream with Go's own readers.
func goInflate(f zlibshim.Format, comp []byte) ([]byte, error) {
	var r io.Reader
	var err error
	switch f {
	case zlibshim.FormatRaw:
		r = flate.NewReader(bytes.NewReader(comp))
	case zlibshim.FormatZlib:
		r, err = zlib.NewReader(bytes.NewReader(comp))
	default:
		var gz *gzip.Reader
		if len(comp) == 0 {
			return nil, io.ErrUnexpectedEOF
		}
		gz, err = gzip.NewReader(bytes.NewReader(comp))
		r = gz
	}
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// shimInflate reads a stream with the shim's Reader.
func shimInflate(p *zlibshim.Process, f zlibshim.Format, comp []byte) ([]byte, error) {
	zr, err := p.NewReader(bytes.NewReader(comp), f)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

// gzipBinary is the path of gzip, or "" when the machine has none.
func gzipBinary() string {
	path, err := exec.LookPath("gzip")
	if err != nil {
		return ""
	}
	return path
}

// gunzip runs gzip -dc over comp.
func gunzip(comp []byte) ([]byte, error) {
	cmd := exec.Command(gzipBinary(), "-dc")
	cmd.Stdin = bytes.NewReader(comp)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("gzip -dc: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}

// gzipCompress runs gzip -c at a level over data.
func gzipCompress(data []byte, level int) []byte {
	cmd := exec.Command(gzipBinary(), "-c", fmt.Sprintf("-%d", level))
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred())
	return out
}

// newFakeProcess is a process over a fake device with a counting meter.
func newFakeProcess(policy zlibshim.Policy, mutate ...func(*zlibshim.Config)) (*zlibshim.Process, *fakeService, *hw.CountingMeter) {
	m := &hw.CountingMeter{}
	svc := newFake(m)
	cfg := zlibshim.Config{Policy: policy}
	for _, f := range mutate {
		f(&cfg)
	}
	p, err := zlibshim.NewProcess(svc, 1, m, cfg)
	Expect(err).NotTo(HaveOccurred())
	return p, svc, m
}

// same compares without printing megabytes on failure.
func same(got, want []byte) {
	ExpectWithOffset(1, len(got)).To(Equal(len(want)), "length")
	ExpectWithOffset(1, bytes.Equal(got, want)).To(BeTrue(), "content differs")
}

func rngFor(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

func flateReader(b []byte) io.Reader { return flate.NewReader(bytes.NewReader(b)) }
