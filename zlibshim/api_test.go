package zlibshim_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"io"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/yamlstrict"
	"github.com/savanna-sim/savanna/zlibshim"
)

func swProcess() *zlibshim.Process {
	p, err := zlibshim.NewProcess(nil, 1, &hw.CountingMeter{}, zlibshim.Config{})
	Expect(err).NotTo(HaveOccurred())
	return p
}

var _ = Describe("The zlib API", func() {
	text := corpus(false)[0].data

	It("selects the format from window bits as deflateInit2 does", func() {
		p := swProcess()
		for _, c := range []struct {
			wb   int
			read func([]byte) ([]byte, error)
		}{
			{15, func(b []byte) ([]byte, error) { return goInflate(zlibshim.FormatZlib, b) }},
			{-15, func(b []byte) ([]byte, error) { return goInflate(zlibshim.FormatRaw, b) }},
			{31, func(b []byte) ([]byte, error) { return goInflate(zlibshim.FormatGzip, b) }},
		} {
			d, err := p.DeflateInit2(6, zlibshim.Deflated, c.wb, 8, zlibshim.DefaultStrategy)
			Expect(err).NotTo(HaveOccurred())
			comp, err := deflateAll(d, text, zlibshim.NoFlush, 1000, 333)
			Expect(err).NotTo(HaveOccurred())
			got, err := c.read(comp)
			Expect(err).NotTo(HaveOccurred())
			same(got, text)
			Expect(d.DeflateEnd()).To(Succeed())
		}
	})

	DescribeTable("rejects bad parameters with ErrStream",
		func(level, method, wb, mem int, s zlibshim.Strategy) {
			_, err := swProcess().DeflateInit2(level, method, wb, mem, s)
			Expect(err).To(MatchError(zlibshim.ErrStream))
		},
		Entry("level 10", 10, 8, 15, 8, zlibshim.DefaultStrategy),
		Entry("method 9", 6, 9, 15, 8, zlibshim.DefaultStrategy),
		Entry("window bits 16", 6, 8, 16, 8, zlibshim.DefaultStrategy),
		Entry("window bits 7", 6, 8, 7, 8, zlibshim.DefaultStrategy),
		Entry("memLevel 0", 6, 8, 15, 0, zlibshim.DefaultStrategy),
		Entry("strategy 9", 6, 8, 15, 8, zlibshim.Strategy(9)),
	)

	It("returns zlib's meanings: OK, buffer error, stream end, stream error", func() {
		p := swProcess()
		d, _ := p.DeflateInit(6)
		d.NextIn, d.NextOut = nil, make([]byte, 10)
		Expect(d.Deflate(zlibshim.NoFlush)).To(MatchError(zlibshim.ErrBuf), "no input, no flush: no progress")
		d.NextIn, d.NextOut = []byte("hello"), nil
		Expect(d.Deflate(zlibshim.NoFlush)).To(MatchError(zlibshim.ErrBuf), "no output space for the header")
		out := make([]byte, 0, 64)
		for {
			buf := make([]byte, 1) // one byte of output at a time
			d.NextOut = buf
			err := d.Deflate(zlibshim.Finish)
			out = append(out, buf[:1-len(d.NextOut)]...)
			if err != nil {
				Expect(err).To(MatchError(zlibshim.ErrStreamEnd))
				break
			}
		}
		d.NextOut = make([]byte, 10)
		Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStreamEnd), "stays at stream end")
		d.NextIn = []byte("more")
		Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStream), "input after Finish")
		got, err := goInflate(zlibshim.FormatZlib, out)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(got)).To(Equal("hello"))
		Expect(d.DeflateEnd()).To(Succeed())
		Expect(d.DeflateEnd()).To(MatchError(zlibshim.ErrStream))
		Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStream))
	})

	It("flushes so that a reader gets all data so far, and resets history on a full flush", func() {
		p, _, _ := newFakeProcess(zlibshim.PolicyFailover)
		d, _ := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatRaw, Level: 6})
		out := make([]byte, 1<<20)
		d.NextIn, d.NextOut = text[:5000], out
		Expect(d.Deflate(zlibshim.SyncFlush)).To(Succeed())
		n := len(out) - len(d.NextOut)
		Expect(out[n-4:n]).To(Equal([]byte{0, 0, 0xff, 0xff}), "ends with the sync marker")
		r := flateReader(out[:n])
		got := make([]byte, 5000)
		_, err := io.ReadFull(r, got)
		Expect(err).NotTo(HaveOccurred())
		same(got, text[:5000])
		d.NextOut = out[n:]
		Expect(d.Deflate(zlibshim.SyncFlush)).To(MatchError(zlibshim.ErrBuf), "the same flush again with nothing new: no progress")
		Expect(d.Deflate(zlibshim.FullFlush)).To(Succeed(), "a full flush after a sync flush writes another marker")
		Expect(d.DeflateEnd()).To(MatchError(zlibshim.ErrData), "ended before Finish")
	})

	It("restarts a stream with DeflateReset, keeping its resources", func() {
		p, svc, _ := newFakeProcess(zlibshim.PolicyFailover)
		d, _ := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: 1})
		for i := 0; i < 3; i++ {
			comp, err := deflateAll(d, text, zlibshim.NoFlush, 1<<20, 1<<20)
			Expect(err).NotTo(HaveOccurred())
			got, err := goInflate(zlibshim.FormatGzip, comp)
			Expect(err).NotTo(HaveOccurred())
			same(got, text)
			Expect(d.DeflateReset()).To(Succeed())
		}
		Expect(p.Stats().PinnedAllocs).To(BeEquivalentTo(2), "one source and one destination buffer, reused")
		Expect(d.DeflateEnd()).To(Succeed())
		Expect(svc.pinnedUsed).To(BeZero())
	})

	It("sends inputs below the threshold to software and larger ones to hardware", func() {
		p, _, _ := newFakeProcess(zlibshim.PolicyFailover)
		for _, n := range []int{1, 1023, 1024, 5000} {
			d, _ := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: 6})
			_, err := deflateAll(d, text[:n], zlibshim.NoFlush, n+1, 1<<16)
			Expect(err).NotTo(HaveOccurred())
			Expect(d.DeflateEnd()).To(Succeed())
		}
		st := p.Stats()
		Expect(st.SmallRequests).To(BeEquivalentTo(2))
		Expect(st.HWRequests).To(BeEquivalentTo(2))
		Expect(st.SWBytesIn).To(BeEquivalentTo(1024))
		Expect(st.HWBytesIn).To(BeEquivalentTo(1024 + 5000))
	})

	It("retries hardware after RetryAfter software requests, and backs off again if it still fails", func() {
		p, svc, _ := newFakeProcess(zlibshim.PolicyFailover, func(c *zlibshim.Config) { c.RetryAfter = 3 })
		svc.noInstance = true
		d, _ := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: 1})
		rs := zlibshim.DefaultRequestSize
		big := textOf(rngFor(9), 12*rs, []string{"retry ", "after ", "three\n"})
		out := make([]byte, 1<<21)
		for i := 0; i < 12; i++ {
			if i == 8 {
				svc.noInstance = false
			}
			d.NextIn, d.NextOut = big[i*rs:(i+1)*rs], out
			Expect(d.Deflate(zlibshim.NoFlush)).To(Succeed())
		}
		st := p.Stats()
		// Requests 0 (fail), 1-3 (backoff), 4 (retry, fail), 5-7 (backoff),
		// 8 (retry, served), 9-11 (hardware).
		Expect(st.Fallbacks.NoInstance).To(BeEquivalentTo(2))
		Expect(st.BackoffRequests).To(BeEquivalentTo(6))
		Expect(st.RetryAttempts).To(BeEquivalentTo(2))
		Expect(st.RetriesFailed).To(BeEquivalentTo(1))
		Expect(st.ReturnsToHW).To(BeEquivalentTo(1))
		Expect(st.HWRequests).To(BeEquivalentTo(4))
		_ = d.DeflateEnd()
	})

	It("writes a gzip-ext member per request with QATzip's QZ extra field", func() {
		p, _, _ := newFakeProcess(zlibshim.PolicyFailover)
		var b bytes.Buffer
		w, _ := p.NewWriterLevel(&b, zlibshim.FormatGzipExt, 1)
		data := text[:150_000]
		_, _ = w.Write(data)
		Expect(w.Close()).To(Succeed())
		comp := b.Bytes()
		members, total := 0, 0
		for len(comp) > 0 {
			Expect(comp[:4]).To(Equal([]byte{0x1f, 0x8b, 8, 4}))
			Expect(comp[12:16]).To(Equal([]byte{'Q', 'Z', 8, 0}))
			src := int(binary.LittleEndian.Uint32(comp[16:]))
			blk := int(binary.LittleEndian.Uint32(comp[20:]))
			total += src
			comp = comp[24+blk+8:]
			members++
		}
		Expect(members).To(Equal(3))
		Expect(total).To(Equal(len(data)))
		got, err := goInflate(zlibshim.FormatGzip, b.Bytes())
		Expect(err).NotTo(HaveOccurred())
		same(got, data)
	})

	It("validates its configuration, naming the key", func() {
		for _, c := range []struct {
			cfg zlibshim.Config
			key string
		}{
			{zlibshim.Config{RequestSize: 100}, "request_size"},
			{zlibshim.Config{SoftwareThreshold: -1}, "software_threshold"},
			{zlibshim.Config{Timeout: -time.Second}, "timeout"},
			{zlibshim.Config{Policy: 7}, "policy"},
			{zlibshim.Config{NUMANode: -2}, "numa_node"},
			{zlibshim.Config{LeakAge: -1}, "leak_age"},
		} {
			Expect(c.cfg.Validate()).To(MatchError(ContainSubstring(c.key)))
		}
		Expect(zlibshim.Config{}.Validate()).To(Succeed())
		_, err := zlibshim.NewProcess(nil, 1, nil, zlibshim.Config{Policy: zlibshim.PolicyHardwareOnly})
		Expect(err).To(MatchError(zlibshim.ErrHardware))
	})

	It("reports leaked streams and reclaims them at Exit", func() {
		p, svc, m := newFakeProcess(zlibshim.PolicyFailover, func(c *zlibshim.Config) { c.LeakAge = time.Second })
		for i := 0; i < 3; i++ {
			d, _ := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: 1})
			d.NextIn, d.NextOut = text[:100_000], make([]byte, 1<<20)
			Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStreamEnd))
		}
		Expect(p.Status().OpenStreams).To(Equal(3))
		Expect(p.Status().LeakedStreams).To(BeZero(), "not idle long enough yet")
		m.Idle(2 * time.Second)
		leaks := p.LeakReport()
		Expect(leaks).To(HaveLen(3))
		Expect(leaks[0].ID).To(BeEquivalentTo(1))
		Expect(leaks[0].PinnedBytes).To(BeNumerically(">", 0))
		Expect(svc.pinnedUsed).To(BeNumerically(">", 0))
		p.Exit()
		Expect(p.Stats().StreamsLeaked).To(BeEquivalentTo(3))
		Expect(p.Status().LeakedStreams).To(Equal(3))
		Expect(svc.pinnedUsed).To(BeZero())
		Expect(svc.exited).To(ConsistOf(hw.ProcessID(1)))
	})
})

var _ = Describe("The inflate side", func() {
	text := corpus(false)[2].data

	DescribeTable("reads what compress/gzip, compress/zlib and gzip itself write, in pieces",
		func(produce func([]byte) []byte, f zlibshim.Format) {
			comp := produce(text)
			p := swProcess()
			z, err := p.NewInflater(f)
			Expect(err).NotTo(HaveOccurred())
			var got []byte
			buf := make([]byte, 777)
			for in := comp; ; {
				z.NextIn = in[:min(len(in), 501)]
				z.NextOut = buf
				err := z.Inflate(zlibshim.NoFlush)
				in = in[min(len(in), 501)-len(z.NextIn):]
				got = append(got, buf[:len(buf)-len(z.NextOut)]...)
				if err != nil {
					Expect(err).To(MatchError(zlibshim.ErrStreamEnd))
					break
				}
			}
			same(got, text)
			Expect(z.InflateEnd()).To(Succeed())
		},
		Entry("compress/gzip", func(b []byte) []byte {
			var o bytes.Buffer
			w := gzip.NewWriter(&o)
			w.Name, w.Comment, w.Extra = "body.json", "a comment", []byte("xx\x02\x00ab")
			_, _ = w.Write(b)
			_ = w.Close()
			return o.Bytes()
		}, zlibshim.FormatGzip),
		Entry("compress/zlib, detected", func(b []byte) []byte {
			var o bytes.Buffer
			w := zlib.NewWriter(&o)
			_, _ = w.Write(b)
			_ = w.Close()
			return o.Bytes()
		}, zlibshim.FormatAuto),
		Entry("gzip -1", func(b []byte) []byte {
			if gzipBinary() == "" {
				Skip("no gzip binary")
			}
			return gzipCompress(b, 1)
		}, zlibshim.FormatGzip),
		Entry("gzip -9, detected", func(b []byte) []byte {
			if gzipBinary() == "" {
				Skip("no gzip binary")
			}
			return gzipCompress(b, 9)
		}, zlibshim.FormatAuto),
	)

	It("reads a file gzip wrote, with its name field, through the Reader", func() {
		if gzipBinary() == "" {
			Skip("no gzip binary")
		}
		comp := gzipCompress(text, 6)
		got, err := shimInflate(swProcess(), zlibshim.FormatGzip, comp)
		Expect(err).NotTo(HaveOccurred())
		same(got, text)
	})

	DescribeTable("corrupt streams are data errors, never panics",
		func(mutate func([]byte) []byte, want error) {
			var o bytes.Buffer
			w := gzip.NewWriter(&o)
			_, _ = w.Write(text[:20000])
			_ = w.Close()
			_, err := shimInflate(swProcess(), zlibshim.FormatGzip, mutate(o.Bytes()))
			Expect(err).To(MatchError(want))
		},
		Entry("bad magic", func(b []byte) []byte { b[0] = 0x1e; return b }, zlibshim.ErrData),
		Entry("bad CRC", func(b []byte) []byte { b[len(b)-6] ^= 1; return b }, zlibshim.ErrData),
		Entry("bad ISIZE", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, zlibshim.ErrData),
		Entry("bad block", func(b []byte) []byte { b[10] |= 0x06; return b }, zlibshim.ErrData),
		Entry("truncated", func(b []byte) []byte { return b[:len(b)/2] }, io.ErrUnexpectedEOF),
		Entry("trailing garbage after a member", func(b []byte) []byte { return append(b, 0x1f, 0x8b, 9) }, zlibshim.ErrData),
	)

	It("is a drop-in Reader and Writer with Reset", func() {
		p := swProcess()
		var o bytes.Buffer
		w := p.NewWriter(&o, zlibshim.FormatZlib)
		for i := 0; i < 2; i++ {
			o.Reset()
			w.Reset(&o)
			_, err := w.Write(text)
			Expect(err).NotTo(HaveOccurred())
			Expect(w.Flush()).To(Succeed())
			Expect(w.Close()).To(Succeed())
			zr, err := zlib.NewReader(bytes.NewReader(o.Bytes()))
			Expect(err).NotTo(HaveOccurred())
			got, err := io.ReadAll(zr)
			Expect(err).NotTo(HaveOccurred())
			same(got, text)
		}
		r, err := p.NewReader(bytes.NewReader(o.Bytes()), zlibshim.FormatZlib)
		Expect(err).NotTo(HaveOccurred())
		var _ io.ReadCloser = r
		var _ io.WriteCloser = w
		got, _ := io.ReadAll(r)
		same(got, text)
		Expect(r.Reset(bytes.NewReader(o.Bytes()))).To(Succeed())
		got, _ = io.ReadAll(r)
		same(got, text)
		Expect(r.Close()).To(Succeed())
		Expect(p.Status().OpenStreams).To(BeZero())
		_, err = p.NewReader(bytes.NewReader(nil), zlibshim.FormatGzip)
		Expect(err).To(MatchError(io.EOF), "as compress/gzip on empty input")
	})
})

var _ = Describe("Config in a scenario file", func() {
	It("decodes from strict YAML with names for policy, completion and durations", func() {
		var c zlibshim.Config
		src := "policy: hardware-only\ncompletion: thread\nrequest_size: 131072\nretry_after: 4\ntimeout: 20ms\nleak_age: 2s\ninstance_per_stream: true\n"
		Expect(yamlstrict.Decode("shim.yaml", []byte(src), &c)).To(Succeed())
		Expect(c.Policy).To(Equal(zlibshim.PolicyHardwareOnly))
		Expect(c.Completion).To(Equal(zlibshim.CompletionThread))
		Expect(c.RequestSize).To(Equal(131072))
		Expect(c.Timeout).To(Equal(20 * time.Millisecond))
		Expect(c.LeakAge).To(Equal(2 * time.Second))
		Expect(c.InstancePerStream).To(BeTrue())
		Expect(c.Validate()).To(Succeed())
		Expect(yamlstrict.Decode("shim.yaml", []byte("policy: sometimes\n"), &c)).To(MatchError(ContainSubstring("sometimes")))
	})
})

var _ = Describe("Reclaiming a leaked stream", func() {
	It("loses no byte when the stream turns out to be alive and goes on", func() {
		text := corpus(false)[0].data
		for _, pol := range []zlibshim.Policy{zlibshim.PolicySoftwareOnly, zlibshim.PolicyFailover} {
			p, _, m := newFakeProcess(pol, func(c *zlibshim.Config) { c.LeakAge = time.Second })
			d, _ := p.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: 6})
			out := make([]byte, 1<<20)
			d.NextIn, d.NextOut = text[:100_000], out
			Expect(d.Deflate(zlibshim.NoFlush)).To(Succeed())
			m.Idle(2 * time.Second)
			Expect(p.ReclaimLeaked()).To(Equal(1))
			Expect(p.Status().PinnedInUse).To(BeZero())
			d.NextIn = text[100_000:]
			Expect(d.Deflate(zlibshim.Finish)).To(MatchError(zlibshim.ErrStreamEnd))
			got, err := goInflate(zlibshim.FormatGzip, out[:len(out)-len(d.NextOut)])
			Expect(err).NotTo(HaveOccurred())
			same(got, text)
			Expect(d.DeflateEnd()).To(Succeed())
		}
	})
})
