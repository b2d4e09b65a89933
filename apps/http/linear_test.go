package http

import (
	"bytes"
	"fmt"
	"github.com/savanna-sim/savanna/apps/appcost"
	"math/rand/v2"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/hw"
)

// padded returns start (a start line and fields, each ending in CRLF),
// a padding field and the blank line, headerBytes long, then body bytes.
func padded(start string, headerBytes, body int) []byte {
	pad := headerBytes - len(start) - len("X-Pad: \r\n\r\n")
	Expect(pad).To(BeNumerically(">=", 0))
	b := make([]byte, 0, headerBytes+body)
	b = append(b, start...)
	b = append(b, "X-Pad: "...)
	b = append(b, bytes.Repeat([]byte("p"), pad)...)
	b = append(b, "\r\n\r\n"...)
	Expect(b).To(HaveLen(headerBytes))
	return append(b, bytes.Repeat([]byte("b"), body)...)
}

func bigRequest(headerBytes, body int) []byte {
	return padded("POST /7 HTTP/1.1\r\nHost: savanna\r\nAccept-Encoding: gzip\r\nContent-Length: "+strconv.Itoa(body)+"\r\n", headerBytes, body)
}

func bigResponse(headerBytes, body int) []byte {
	return padded("HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(body)+"\r\n", headerBytes, body)
}

// linearBound is the work a message of size bytes delivered in calls
// pieces may cost: each byte examined a bounded number of times (searched
// once, parsed once, moved at most once) and a few bytes per call (the
// call itself and the three bytes a search looks at again).
func linearBound(size, calls int) uint64 { return uint64(3*size + 4*calls) }

// feed gives parse the prefixes of msg that end every piece bytes (the
// whole message at the end), as a connection's growing input, and returns
// the number of calls and the work done. It stops early if the work
// exceeds the linear bound, so the quadratic code fails fast.
func feed(msg []byte, piece int, parse func([]byte) (int, error), work *uint64) (calls int) {
	pieces := (len(msg) + piece - 1) / piece
	bound := linearBound(len(msg), pieces)
	for end := piece; ; end += piece {
		end = min(end, len(msg))
		calls++
		n, err := parse(msg[:end])
		if *work > bound {
			Fail(fmt.Sprintf("work %d exceeds the linear bound %d after %d of %d bytes", *work, bound, end, len(msg)))
		}
		if end < len(msg) {
			// Plain checks: a matcher per byte would cost more than the
			// parse it checks.
			if err != errIncomplete {
				Fail(fmt.Sprintf("after %d of %d bytes: %v, want %v", end, len(msg), err, errIncomplete))
			}
			continue
		}
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(len(msg)))
		return calls
	}
}

var _ = Describe("a message that arrives in pieces", func() {
	// The largest header the limit allows, alone and before the largest
	// body, byte by byte and in a TCP segment's payload at a 1500-byte MTU.
	sizes := []struct {
		name         string
		header, body int
	}{
		{"a 16 KiB header", maxHeaderBytes, 0},
		{"a 16 KiB header and a 64 MiB body", maxHeaderBytes, maxBodyBytes},
	}
	// Byte by byte, a multi-MiB message is millions of calls: a second or
	// two, hence "slow"; the 1460-byte pieces check the same bound.
	slow := func(piece, size int) Labels {
		if piece == 1 && size > 1<<20 {
			return Label("slow")
		}
		return nil
	}
	for _, sz := range sizes {
		for _, piece := range []int{1, 1460} {
			It(fmt.Sprintf("costs the request parser linear work: %s in %d-byte pieces", sz.name, piece), slow(piece, sz.body), func() {
				msg := bigRequest(sz.header, sz.body)
				var p requestParser
				calls := feed(msg, piece, func(b []byte) (int, error) {
					r, err := p.parse(b)
					if err == nil {
						Expect(string(r.path)).To(Equal("/7"))
						Expect(r.gzip).To(BeTrue())
					}
					return r.length, err
				}, &p.work)
				GinkgoWriter.Printf("request of %d bytes in %d calls: work %d (bound %d)\n", len(msg), calls, p.work, linearBound(len(msg), calls))
			})

			It(fmt.Sprintf("costs the response parser linear work: %s in %d-byte pieces", sz.name, piece), slow(piece, sz.body), func() {
				msg := bigResponse(sz.header, sz.body)
				var p responseParser
				calls := feed(msg, piece, func(b []byte) (int, error) {
					r, err := p.parse(b)
					if err == nil {
						Expect(r.status).To(Equal(200))
					}
					return r.length, err
				}, &p.work)
				GinkgoWriter.Printf("response of %d bytes in %d calls: work %d (bound %d)\n", len(msg), calls, p.work, linearBound(len(msg), calls))
			})
		}
	}

	for _, piece := range []int{1, 1460} {
		It(fmt.Sprintf("costs the server's loop linear work: pipelined requests in %d-byte pieces", piece), slow(piece, 4<<20), func() {
			// Four requests back to back, cut anywhere: each piece is
			// appended to the connection's input and handled as a read is.
			var stream []byte
			for range 4 {
				stream = append(stream, bigRequest(maxHeaderBytes, 1<<20)...)
			}
			st := &site{s: &Server{corpus: NewCorpus(rand.New(rand.NewPCG(1, 2)), []int{64})}}
			hc := &httpConn{}
			m := &hw.CountingMeter{}
			calls := 0
			bound := linearBound(len(stream), len(stream)/piece+1)
			for off := 0; off < len(stream); off += piece {
				hc.in = append(hc.in, stream[off:min(off+piece, len(stream))]...)
				if !st.handle(m, nil, hc) {
					Fail(fmt.Sprintf("the connection was dropped after %d bytes", off))
				}
				calls++
				if hc.parser.work > bound {
					Fail(fmt.Sprintf("work %d exceeds the linear bound %d after %d of %d bytes", hc.parser.work, bound, off, len(stream)))
				}
			}
			Expect(st.s.stats.Requests).To(BeEquivalentTo(4))
			Expect(st.s.stats.BadRequests).To(BeZero())
			Expect(hc.in).To(BeEmpty())
			Expect(m.Counts[appcost.ParseByte]).To(BeEquivalentTo(len(stream)))
			GinkgoWriter.Printf("server: %d bytes in %d reads: work %d (bound %d)\n", len(stream), calls, hc.parser.work, bound)
		})

		It(fmt.Sprintf("costs wrk's loop linear work: the largest page in %d-byte pieces", piece), slow(piece, 16<<20), func() {
			msg := bigResponse(512, 16<<20)
			w := &Wrk{lat: latency.New()}
			wc := &wrkConn{busy: true}
			m := &hw.CountingMeter{}
			bound := linearBound(len(msg), len(msg)/piece+1)
			calls := 0
			for off := 0; off < len(msg); off += piece {
				wc.in = append(wc.in, msg[off:min(off+piece, len(msg))]...)
				if !w.consume(m, wc) {
					Fail(fmt.Sprintf("the connection was replaced after %d bytes", off))
				}
				calls++
				if wc.parser.work > bound {
					Fail(fmt.Sprintf("work %d exceeds the linear bound %d after %d of %d bytes", wc.parser.work, bound, off, len(msg)))
				}
			}
			Expect(w.stats.Status2xx).To(BeEquivalentTo(1))
			Expect(w.stats.BytesRead).To(BeEquivalentTo(len(msg)))
			Expect(wc.in).To(BeEmpty())
			GinkgoWriter.Printf("wrk: %d bytes in %d reads: work %d (bound %d)\n", len(msg), calls, wc.parser.work, bound)
		})
	}

	It("is refused past the header limit however it is cut", func() {
		msg := bigRequest(maxHeaderBytes+1, 0)
		_, err := parseRequest(msg)
		Expect(err).To(MatchError(errTooLarge))
		var p requestParser
		for end := 1; end <= len(msg); end++ {
			if _, err = p.parse(msg[:end]); err != errIncomplete {
				break
			}
		}
		Expect(err).To(MatchError(errTooLarge))
		_, err = parseResponse(bigResponse(maxHeaderBytes+1, 0))
		Expect(err).To(MatchError(errTooLarge))
	})
})
