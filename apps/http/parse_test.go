package http

import (
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("requests", func() {
	It("parse a keep-alive GET that accepts gzip, and wait for the rest of a partial one", func() {
		raw := []byte("GET /2 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: deflate, gzip\r\n\r\nGET /3 HTTP/1.1\r\n")
		r, err := parseRequest(raw)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(r.path)).To(Equal("/2"))
		Expect(r.gzip).To(BeTrue())
		Expect(r.close).To(BeFalse())
		_, err = parseRequest(raw[r.length:])
		Expect(err).To(MatchError(errIncomplete))
	})

	It("honour Connection: close and HTTP/1.0, and count a body", func() {
		r, err := parseRequest([]byte("POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc"))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.close).To(BeTrue())
		Expect(r.length).To(Equal(len("POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc")))
	})

	DescribeTable("are refused when malformed",
		func(raw string, want error) {
			_, err := parseRequest([]byte(raw))
			Expect(err).To(MatchError(want))
		},
		Entry("no version", "GET /\r\n\r\n", errMalformed),
		Entry("header without colon", "GET / HTTP/1.1\r\nbroken\r\n\r\n", errMalformed),
		Entry("negative length", "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", errMalformed),
		Entry("endless header", "GET / HTTP/1.1\r\n"+string(bytes.Repeat([]byte("a"), maxHeaderBytes+1)), errTooLarge),
	)
})

var _ = Describe("responses", func() {
	It("parse status and Content-Length", func() {
		raw := []byte("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\nokHTTP/1.1")
		r, err := parseResponse(raw)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.status).To(Equal(500))
		Expect(r.length).To(Equal(len(raw) - len("HTTP/1.1")))
	})
})

var _ = Describe("the corpus", func() {
	It("makes pages of the sizes asked that gzip compresses as HTML does", func() {
		c := NewCorpus(rand.New(rand.NewPCG(1, 2)), []int{16 << 10, 128 << 10})
		Expect(c.Pages[0]).To(HaveLen(16 << 10))
		Expect(c.Pages[1]).To(HaveLen(128 << 10))
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, 6)
		_, _ = zw.Write(c.Pages[1])
		_ = zw.Close()
		ratio := float64(len(c.Pages[1])) / float64(buf.Len())
		Expect(ratio).To(BeNumerically(">", 2.5))
		Expect(ratio).To(BeNumerically("<", 8))
	})
})

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte("GET /2 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n"))
	f.Add([]byte("POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRequest(b)
		if err == nil && (r.length <= 0 || r.length > len(b)) {
			t.Fatalf("length %d of %d", r.length, len(b))
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseResponse(b)
		if err == nil && (r.length <= 0 || r.length > len(b)) {
			t.Fatalf("length %d of %d", r.length, len(b))
		}
	})
}
