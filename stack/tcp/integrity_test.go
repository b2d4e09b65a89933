package tcp

import (
	"fmt"
	"io"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Integrity over a lossy wire", func() {
	type tc struct {
		cc   string
		size int64
		wire wireConfig
	}
	run := func(t tc) {
		cfg := tuned(func(c *Config) {
			c.CongestionControl = t.cc
			c.MinRTO = 20 * time.Millisecond
			c.SendBuffer = 1 << 20
			c.RecvBuffer = 1 << 20
		})
		w := newWire(t.wire, [2]Config{cfg, cfg})
		res := w.transfer(t.size, 600*time.Second, t.wire.seed)
		Expect(res.err).NotTo(HaveOccurred())
		Expect(res.done).To(BeTrue(), "transfer stalled: %d of %d bytes at %v; client %+v server stats %+v",
			res.received, res.bytes, w.now, w.stacks[0].Stats(), w.stacks[1].Stats())
		Expect(res.received).To(Equal(t.size))
		Expect(res.recvHash).To(Equal(res.sentHash))
		if t.wire.corrupt > 0 {
			// Every corrupted copy that was delivered is caught (a few
			// may still be in flight when the transfer ends).
			caught := w.stacks[0].Stats().InCsumErrors + w.stacks[1].Stats().InCsumErrors
			Expect(caught).To(BeNumerically(">", 0))
			Expect(caught).To(BeNumerically("<=", w.corrupted))
			Expect(caught).To(BeNumerically(">=", w.corrupted-len(w.q)))
		}
		Expect(w.maxSeg).To(BeNumerically("<=", 1500-20), "a segment exceeded the MTU")
		GinkgoWriter.Printf("%s: %d bytes in %v virtual, dropped %d, corrupted %d, retrans %d, rto %d, fast %d\n",
			t.cc, res.received, res.elapsed, w.dropped, w.corrupted, w.stacks[0].Stats().RetransSegs,
			w.stacks[0].Stats().RtoTimeouts, w.stacks[0].Stats().FastRetransmits)
	}
	entries := []any{run}
	for _, cc := range []string{CCNewReno, CCCubic} {
		base := wireConfig{rateBps: 10e9, latency: 50 * time.Microsecond}
		add := func(name string, size int64, wc wireConfig, labels ...interface{}) {
			args := append([]interface{}{tc{cc, size, wc}}, labels...)
			entries = append(entries, Entry(fmt.Sprintf("%s %s", cc, name), args...))
		}
		wc := base
		wc.seed = 1
		add("clean 16MiB", 16<<20, wc)
		wc.loss, wc.seed = 0.01, 2
		add("1% loss 16MiB", 16<<20, wc)
		wc.loss, wc.seed = 0.05, 3
		add("5% loss 16MiB", 16<<20, wc)
		wc = base
		wc.loss, wc.dup, wc.reorder, wc.reorderBy, wc.corrupt, wc.seed = 0.01, 0.01, 0.05, 200*time.Microsecond, 0.01, 4
		add("loss+dup+reorder+corrupt 16MiB", 16<<20, wc)
		wc.seed = 5
		wc.loss = 0.05
		add("5% loss+dup+reorder+corrupt 64MiB", 64<<20, wc, Label("slow"))
	}
	DescribeTable("a bulk transfer arrives intact", entries...)

	DescribeTable("both directions at once arrive intact (piggybacked ACKs, SACK options on data)",
		func(cc string, seed uint64) {
			cfg := tuned(func(c *Config) {
				c.CongestionControl = cc
				c.MinRTO = 20 * time.Millisecond
				c.SendBuffer = 512 << 10
				c.RecvBuffer = 512 << 10
			})
			w := newWire(wireConfig{rateBps: 10e9, latency: 30 * time.Microsecond, loss: 0.02, reorder: 0.02,
				reorderBy: 60 * time.Microsecond, dup: 0.005, seed: seed}, [2]Config{cfg, cfg})
			l, err := w.stacks[1].Listen(w.addrs[1], 7, 4)
			Expect(err).NotTo(HaveOccurred())
			a, err := w.stacks[0].Connect(0, Addr{w.addrs[0], 0}, Addr{w.addrs[1], 7})
			Expect(err).NotTo(HaveOccurred())
			var b *Conn
			const size = 8 << 20
			sa, sb := newStreamer(size, seed), newStreamer(size, seed+1)
			da, db := newDrainer(), newDrainer()
			for {
				if b == nil {
					b, _ = l.Accept()
				}
				sa.pump(a)
				da.pump(a)
				if b != nil {
					sb.pump(b)
					db.pump(b)
				}
				if da.eof && db.eof {
					break
				}
				Expect(w.step(120*time.Second)).To(BeTrue(), "stalled: a read %d, b read %d", da.n, db.n)
			}
			Expect(db.n).To(BeEquivalentTo(size))
			Expect(da.n).To(BeEquivalentTo(size))
			Expect(db.h.Sum(nil)).To(Equal(sa.h.Sum(nil)))
			Expect(da.h.Sum(nil)).To(Equal(sb.h.Sum(nil)))
			Expect(w.maxSeg).To(BeNumerically("<=", 1500-20))
			Expect(w.stacks[0].Stats().OfoQueued).To(BeNumerically(">", 0))
		},
		Entry("cubic", CCCubic, uint64(21)),
		Entry("newreno", CCNewReno, uint64(22)),
	)

	DescribeTable("a slow reader: zero windows, probes and window updates under loss",
		func(cc string, loss float64, seed uint64) {
			cfg := tuned(func(c *Config) {
				c.CongestionControl = cc
				c.MinRTO = 20 * time.Millisecond
				c.SendBuffer = 256 << 10
			})
			rcfg := cfg
			rcfg.RecvBuffer = 32 << 10
			w := newWire(wireConfig{rateBps: 10e9, latency: 50 * time.Microsecond, loss: loss, seed: seed},
				[2]Config{cfg, rcfg})
			l, _ := w.stacks[1].Listen(w.addrs[1], 9, 4)
			a, err := w.stacks[0].Connect(0, Addr{w.addrs[0], 0}, Addr{w.addrs[1], 9})
			Expect(err).NotTo(HaveOccurred())
			const size = 2 << 20
			st := newStreamer(size, seed)
			d := newDrainer()
			d.rbuf = make([]byte, 3000) // at most 3000 bytes per read
			var b *Conn
			nextRead := time.Duration(0)
			for !d.eof {
				if b == nil {
					b, _ = l.Accept()
				}
				st.pump(a)
				if b != nil && w.now >= nextRead {
					// Read one small chunk every 200 us: 15 MB/s,
					// far below the link, so the window closes.
					n, err := b.Read(d.rbuf)
					d.h.Write(d.rbuf[:n])
					d.n += int64(n)
					d.eof = err == io.EOF
					nextRead = w.now + 200*time.Microsecond
					if n > 0 && d.n%(256<<10) < int64(n) {
						// A 30 ms pause every 256 KiB: the window
						// closes completely.
						nextRead = w.now + 30*time.Millisecond
					}
				}
				next := nextRead
				if next <= w.now {
					next = w.now + 200*time.Microsecond
				}
				if !w.step(next) {
					w.now = next
				}
				Expect(w.now).To(BeNumerically("<", 600*time.Second), "stalled at %d bytes", d.n)
			}
			Expect(d.n).To(BeEquivalentTo(size))
			Expect(d.h.Sum(nil)).To(Equal(st.h.Sum(nil)))
			GinkgoWriter.Printf("slow reader %s loss %.2f: %v virtual, zero-window probes %d, rto %d, receiver drops %+v\n",
				cc, loss, w.now, w.stacks[0].Stats().ZeroWindowProbes, w.stacks[0].Stats().RtoTimeouts, w.stacks[1].Stats().Drops)
		},
		Entry("cubic, clean", CCCubic, 0.0, uint64(41)),
		Entry("newreno, 2% loss", CCNewReno, 0.02, uint64(42)),
		Entry("cubic, 5% loss", CCCubic, 0.05, uint64(43)),
	)

	It("carries data across the 2^32 sequence wrap (RFC 9293 section 3.4)", func() {
		cfg := tuned(func(c *Config) {
			c.MinRTO = 20 * time.Millisecond
			c.SendBuffer = 1 << 20
			c.RecvBuffer = 1 << 20
		})
		w := newWire(wireConfig{rateBps: 10e9, latency: 50 * time.Microsecond, loss: 0.01, reorder: 0.02,
			reorderBy: 100 * time.Microsecond, seed: 11}, [2]Config{cfg, cfg})
		w.clientPort = 40000
		id := fourTuple{localAddr: w.addrs[0], remoteAddr: w.addrs[1], localPort: 40000, remotePort: 5001}
		// Start when the client's ISN (hash + 4 us clock, RFC 6528) is
		// 1 MiB below the wrap, so the 8 MiB transfer crosses it.
		base := w.stacks[0].isn(0, id)
		const target = uint32(1<<32 - 1<<20)
		ticks := target - uint32(base)
		w.now = time.Duration(ticks) * 4 * time.Microsecond
		Expect(uint32(w.stacks[0].isn(w.now, id))).To(Equal(target))
		res := w.transfer(8<<20, w.now+60*time.Second, 11)
		Expect(res.err).NotTo(HaveOccurred())
		Expect(res.done).To(BeTrue())
		Expect(res.recvHash).To(Equal(res.sentHash))
	})
})
