package icmpv6_test

import (
	"bytes"
	"testing"

	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// FuzzParse checks that Parse never panics on a message, that what parses
// round-trips through Emit, and runs the rules and builders that read an
// invoking packet (ErrorAllowed, Build, EchoReply) over the same bytes.
func FuzzParse(f *testing.F) {
	inv := packet(me, peer, ipv6.NextUDP, pattern(20))
	for _, r := range []icmpv6.Repr{
		{Type: icmpv6.TypeEchoRequest, Ident: 1, Seq: 2, Data: pattern(16)},
		{Type: icmpv6.TypePacketTooBig, MTU: 1280, Data: inv},
		{Type: icmpv6.TypeParamProblem, Code: 2, Pointer: 42, Data: inv},
		{Type: icmpv6.TypeDestUnreach, Code: 4, Data: inv[:40]},
		{Type: icmpv6.TypeNeighborSolicitation, Data: pattern(16)},
	} {
		b := make([]byte, r.BufferLen())
		r.Emit(b, peer, me)
		f.Add(b)
	}
	f.Add([]byte{1, 0, 0, 0})
	e := icmpv6.NewErrors(nil, nil)
	out := make([]byte, ipv6.MinMTU+ipv6.MaxPayloadLen)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, verify := range []bool{true, false} {
			r, err := icmpv6.Parse(b, peer, me, verify)
			if err != nil {
				continue
			}
			switch r.Type {
			case icmpv6.TypeEchoRequest, icmpv6.TypeEchoReply, icmpv6.TypePacketTooBig, icmpv6.TypeParamProblem:
				back := make([]byte, r.BufferLen())
				r.Emit(back, peer, me)
				if verify && !bytes.Equal(back, b) {
					t.Fatalf("round trip: %x vs %x", back, b)
				}
				if r.Type == icmpv6.TypeEchoRequest {
					if n := icmpv6.EchoReply(icmpv6.EchoConfig{}, ipv6.Repr{Src: peer, Dst: me}, r, me, 0, out, nil); n != icmpv6.EchoReplyLen(r) {
						t.Fatalf("echo reply of %d bytes", n)
					}
				}
			}
			if r.Type.IsError() {
				q, err := icmpv6.Invoking(r.Data)
				if err != nil {
					t.Fatalf("error parsed with a bad quote")
				}
				_ = icmpv6.ErrorAllowed(q, r.Type, r.Code, false)
			}
		}
		// The same bytes as an invoking packet.
		if len(b) >= ipv6.HeaderLen {
			n, s := e.Build(0, icmpv6.ErrorRequest{Type: icmpv6.TypeParamProblem, Invoking: b, Local: me}, out)
			if s == icmpv6.Allowed && (n > ipv6.MinMTU || n != icmpv6.ErrorPacketLen(b)) {
				t.Fatalf("error of %d bytes", n)
			}
		}
	})
}
