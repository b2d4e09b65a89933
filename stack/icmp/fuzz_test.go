package icmp_test

import (
	"testing"

	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// FuzzParse checks Parse, the quote checker and the error rules never
// panic, and that what parses round-trips.
func FuzzParse(f *testing.F) {
	f.Add([]byte(emit(icmp.Repr{Type: icmp.TypeEchoRequest, Ident: 1, Seq: 2, Data: []byte("x")})))
	f.Add([]byte(emit(icmp.Repr{Type: icmp.TypeDestUnreach, Code: 3, Data: offending(17, make([]byte, 8))})))
	f.Add([]byte{3, 4, 0, 0, 0, 0, 5, 0xdc})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := icmp.Parse(icmp.Packet(b), false)
		if err != nil {
			return
		}
		if r.Type.IsError() {
			q, err := icmp.Quoted(r.Data)
			if err != nil {
				t.Fatalf("Parse accepted a bad quote")
			}
			icmp.ErrorAllowed(q, false, false)
			_ = icmp.QuoteOf(q)
		}
		if p, err := ipv4.Check(b); err == nil {
			icmp.ErrorAllowed(p, false, false)
		}
		out := make([]byte, r.BufferLen())
		r.Emit(icmp.Packet(out))
		back, err := icmp.Parse(icmp.Packet(out), true)
		if err != nil || back.Type != r.Type || back.Code != r.Code || len(back.Data) != len(r.Data) {
			t.Fatalf("round trip: %+v vs %+v (%v)", back, r, err)
		}
	})
}
