package http

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// cuts returns increasing cut points in (0, n], n last, drawn from seed:
// the ends of the pieces a connection might receive n bytes in.
func cuts(n int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, seed>>32))
	var out []int
	for at := 0; at < n; {
		// Mostly small pieces, so that splits inside the header's
		// terminator and start line are common.
		step := 1 + rng.IntN(8)
		if rng.IntN(4) == 0 {
			step = 1 + rng.IntN(n)
		}
		at = min(at+step, n)
		out = append(out, at)
	}
	return out
}

// outcome is what a parse gave, as text: the slices it returned alias
// different buffers in the two runs compared.
type outcome struct {
	what, err string
}

func outcomeOf(what string, err error) outcome {
	if err != nil {
		return outcome{err: err.Error()}
	}
	return outcome{what: what}
}

// stream parses the messages at the start of b one after another, as a
// connection's loop does, each message from the whole buffer with a new
// parser; it stops at the first error (errIncomplete included).
func stream(b []byte, parse func([]byte) (int, string, error)) []outcome {
	var out []outcome
	for off := 0; ; {
		n, what, err := parse(b[off:])
		out = append(out, outcomeOf(what, err))
		if err != nil {
			return out
		}
		off += n
	}
}

// streamPieces is stream with b arriving in pieces ending at ends: each
// piece is appended to the input, the complete messages are taken, the
// input is compacted with consume, as server.go's handle does, and one
// parser keeps the state of the message that is still arriving.
func streamPieces(b []byte, ends []int, parse func([]byte) (int, string, error)) []outcome {
	var out []outcome
	var in []byte
	var work uint64
	from := 0
	for _, end := range ends {
		in = append(in, b[from:end]...)
		from = end
		off := 0
		for {
			n, what, err := parse(in[off:])
			if err == errIncomplete && end < len(b) {
				break // more is coming
			}
			out = append(out, outcomeOf(what, err))
			if err != nil {
				return out
			}
			off += n
		}
		in = consume(in, off, &work)
	}
	return out
}

func checkSplits(t *testing.T, b []byte, seed uint64, whole func([]byte) (int, string, error), pieces func() func([]byte) (int, string, error)) {
	want := stream(b, whole)
	ends := cuts(len(b), seed)
	if len(b) == 0 {
		ends = []int{0}
	}
	got := streamPieces(b, ends, pieces())
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("in pieces ending at %v:\n got %v\nwant %v", ends, got, want)
	}
}

func requestOutcome(r request, err error) (int, string, error) {
	if err != nil {
		return 0, "", err
	}
	return r.length, fmt.Sprintf("%q %q gzip=%v close=%v length=%d", r.method, r.path, r.gzip, r.close, r.length), nil
}

func responseOutcome(r response, err error) (int, string, error) {
	if err != nil {
		return 0, "", err
	}
	return r.length, fmt.Sprintf("%+v", r), nil
}

// FuzzRequestSplits checks that requests cut into random pieces and fed
// to one resuming parser, as the server's loop does, parse as they do
// from the whole buffer: same requests, same error, at the same place.
func FuzzRequestSplits(f *testing.F) {
	f.Add([]byte("GET /2 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\nGET /3 HTTP/1.0\r\n\r\n"), uint64(1))
	f.Add([]byte("POST / HTTP/1.0\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nabcGET /x HTTP/1.1\r\nbroken\r\n\r\n"), uint64(2))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\r\n\r\n\n"), uint64(3))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		checkSplits(t, b, seed,
			func(b []byte) (int, string, error) { return requestOutcome(parseRequest(b)) },
			func() func([]byte) (int, string, error) {
				var p requestParser
				return func(b []byte) (int, string, error) { return requestOutcome(p.parse(b)) }
			})
	})
}

// FuzzResponseSplits is FuzzRequestSplits for wrk's response parser.
func FuzzResponseSplits(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 500 E\r\nContent-Length: 0\r\n\r\n"), uint64(1))
	f.Add([]byte("HTTP/1.1 204\r\nX: y\r\ncontent-length:  1 \r\n\r\n!HTTP/1.1 200 OK\r\n\r\n"), uint64(2))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		checkSplits(t, b, seed,
			func(b []byte) (int, string, error) { return responseOutcome(parseResponse(b)) },
			func() func([]byte) (int, string, error) {
				var p responseParser
				return func(b []byte) (int, string, error) { return responseOutcome(p.parse(b)) }
			})
	})
}
