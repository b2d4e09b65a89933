package ipv4_test

import (
	"testing"
	"time"

	"github.com/savanna-sim/savanna/stack/ipv4"
)

type nopReasmSink struct{}

func (nopReasmSink) ReassemblyTimeout(time.Duration, []byte) {}

// FuzzParse checks that Parse never panics, that what parses round-trips
// through Emit, and feeds fragments to a reassembler (the input path).
func FuzzParse(f *testing.F) {
	f.Add([]byte(datagram(ipv4.Repr{Src: src, Dst: dst, Protocol: 17, TTL: 64}, []byte("abcdefgh"))))
	p, _ := fragment(1, pattern(64), 0, 32, true)
	f.Add([]byte(p))
	p, _ = fragment(1, pattern(64), 32, 32, false)
	f.Add([]byte(p))
	f.Add([]byte{0x45, 0, 0, 20})
	f.Add([]byte{0x4f, 0, 0, 60})
	var st ipv4.Stats
	ra, err := ipv4.NewReassembler(ipv4.ReasmConfig{MaxDatagrams: 4, MaxFragments: 8, MaxBytes: 1 << 16}, &st)
	if err != nil {
		f.Fatal(err)
	}
	var now time.Duration
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, verify := range []bool{true, false} {
			r, err := ipv4.Parse(ipv4.Packet(b), verify)
			if err != nil {
				st.CountError(err)
				continue
			}
			q, _ := ipv4.Check(b)
			_ = q.Options()
			_ = q.Payload()
			if len(q) != r.HeaderLen+r.PayloadLen {
				t.Fatalf("length mismatch")
			}
			if r.HeaderLen == ipv4.MinHeaderLen {
				out := make([]byte, len(q))
				r.Emit(ipv4.Packet(out), true)
				back, err := ipv4.Parse(ipv4.Packet(out), true)
				if err != nil || back.Src != r.Src || back.FragOffset != r.FragOffset || back.MoreFrags != r.MoreFrags {
					t.Fatalf("round trip: %+v vs %+v (%v)", back, r, err)
				}
			}
			if r.IsFragment() && !verify {
				now += time.Second
				d, _ := ra.Input(now, q, r)
				if d != nil {
					if _, err := ipv4.Parse(d, true); err != nil {
						t.Fatalf("reassembled datagram does not parse: %v", err)
					}
				}
				ra.Poll(now, nopReasmSink{})
			}
		}
	})
}
