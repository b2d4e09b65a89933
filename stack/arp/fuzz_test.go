package arp_test

import (
	"testing"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/ether"
)

type nopSink struct{}

func (nopSink) SendARP(time.Duration, arp.Repr, ether.Addr)     {}
func (nopSink) SendPending(time.Duration, *hw.Mbuf, ether.Addr) {}
func (nopSink) DropPending(*hw.Mbuf)                            {}

// FuzzParse feeds random bytes to Parse and, when they parse, to a cache.
func FuzzParse(f *testing.F) {
	b := make([]byte, arp.PacketLen)
	arp.Repr{Op: arp.OpRequest, SenderHW: ether.Addr{2, 0, 0, 0, 0, 2}, SenderIP: [4]byte{10, 0, 0, 2}, TargetIP: [4]byte{10, 0, 0, 1}}.Emit(arp.Packet(b))
	f.Add(b)
	f.Add([]byte{0, 1, 8, 0, 6, 4, 0, 2})
	f.Add([]byte{})
	c, err := arp.NewCache(arp.Config{MaxEntries: 4}, [4]byte{10, 0, 0, 1}, ether.Addr{2, 0, 0, 0, 0, 1})
	if err != nil {
		f.Fatal(err)
	}
	var now time.Duration
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := arp.Parse(arp.Packet(b))
		if err != nil {
			c.CountError(err)
			return
		}
		out := make([]byte, arp.PacketLen)
		r.Emit(arp.Packet(out))
		back, err := arp.Parse(arp.Packet(out))
		if err != nil || back != r {
			t.Fatalf("round trip: %+v vs %+v (%v)", back, r, err)
		}
		now += time.Second
		c.Input(now, r, nopSink{})
		c.Resolve(now, r.TargetIP, &hw.Mbuf{}, nopSink{})
		c.Poll(now, nopSink{})
	})
}
