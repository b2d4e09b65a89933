package tcp

import (
	"math/rand/v2"
	"testing"
	"time"
)

// countOut counts segments and keeps nothing.
type countOut struct {
	ipv4Network
	n int
}

func (c *countOut) SendSegment(time.Duration, IP, IP, []byte) error { c.n++; return nil }

// BenchmarkEstablishedRx measures the established fast path: one
// in-order full-sized data segment in (checksum computed by the test and
// verified by the engine in software), the application reads it, and an
// ACK goes out every second segment.
func BenchmarkEstablishedRx(b *testing.B) { benchRx(b, false) }

// BenchmarkEstablishedRxOffload is the same path with the checksum left
// to the NIC on both sides (InputVerified, ChecksumOffloadTx): the
// engine's own cost.
func BenchmarkEstablishedRxOffload(b *testing.B) { benchRx(b, true) }

func benchRx(b *testing.B, offload bool) {
	out := &countOut{}
	s, err := New(tuned(func(c *Config) { c.ChecksumOffloadTx = offload }), rand.New(rand.NewPCG(1, 1)), out)
	if err != nil {
		b.Fatal(err)
	}
	local, remote := IPFrom4([4]byte{10, 0, 0, 1}), IPFrom4([4]byte{10, 0, 0, 2})
	l, _ := s.Listen(local, 80, 4)
	cap := &discard{}
	s.out = cap
	emit := func(r Repr, buf []byte) []byte {
		n := r.HeaderLen() + len(r.Payload)
		buf = buf[:n]
		copy(buf[r.Emit(buf):], r.Payload)
		setV4Checksum(buf, remote, local)
		return buf
	}
	scratch := make([]byte, 2048)
	s.Input(0, remote, local, emit(Repr{SrcPort: 999, DstPort: 80, Seq: 100, Flags: FlagSYN, Window: 65535,
		MSS: 1460, HasWScale: true, WScale: 7, SACKPermitted: true, HasTS: true, TSVal: 1}, scratch))
	sa, _ := Parse(cap.last)
	s.Input(0, remote, local, emit(Repr{SrcPort: 999, DstPort: 80, Seq: 101, Ack: sa.Seq + 1, Flags: FlagACK,
		Window: 65535, HasTS: true, TSVal: 2, TSEcr: sa.TSVal}, scratch))
	c, ok := l.Accept()
	if !ok {
		b.Fatal("no connection")
	}
	s.out = out
	payload := make([]byte, 1448)
	for i := range payload {
		scratch[60+i] = byte(i)
	}
	rbuf := make([]byte, 4096)
	seq := Seq(101)
	r := Repr{SrcPort: 999, DstPort: 80, Ack: sa.Seq + 1, Flags: FlagACK, Window: 65535, HasTS: true,
		TSVal: 3, TSEcr: sa.TSVal, Payload: payload}
	now := time.Duration(0)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Seq = seq
		r.TSVal++
		now += time.Microsecond
		if offload {
			seg := scratch[:r.HeaderLen()+len(payload)]
			r.Emit(seg)
			s.InputVerified(now, remote, local, seg)
		} else {
			s.Input(now, remote, local, emit(r, scratch))
		}
		seq = seq.Add(len(payload))
		for {
			n, _ := c.Read(rbuf)
			if n == 0 {
				break
			}
		}
		s.Poll(now)
	}
	b.StopTimer()
	b.ReportMetric(float64(out.n)/float64(b.N), "acks/seg")
	if c.rcvNxt != seq {
		b.Fatalf("lost data: rcv.nxt %d want %d", c.rcvNxt, seq)
	}
}

// BenchmarkBulkTransfer runs a clean 10 Gb/s transfer between two
// engines on the test wire and reports engine segments per op (one op =
// one data segment delivered).
func BenchmarkBulkTransfer(b *testing.B) {
	size := int64(b.N) * 1448
	if size < 1<<20 {
		size = 1 << 20
	}
	cfg := tuned(func(c *Config) {
		c.SendBuffer = 1 << 20
		c.RecvBuffer = 1 << 20
	})
	w := newWire(wireConfig{rateBps: 10e9, latency: 20 * time.Microsecond, seed: 1}, [2]Config{cfg, cfg})
	b.ReportAllocs()
	b.ResetTimer()
	res := w.transfer(size, time.Hour, 1)
	b.StopTimer()
	if !res.done || res.recvHash != res.sentHash {
		b.Fatalf("transfer failed: %+v", res.err)
	}
	segs := w.stacks[0].Stats().OutSegs + w.stacks[1].Stats().OutSegs
	b.ReportMetric(float64(segs)/float64(b.N), "segs/op")
}
