package ipv6_test

import (
	"encoding/binary"
	"time"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

var (
	src   = ipv6.Addr{0: 0xfd, 15: 2}
	dst   = ipv6.Addr{0: 0xfd, 15: 1}
	group = ipv6.Addr{0: 0xff, 1: 0x02, 15: 1}
)

// ext is an extension header to put in a test packet: its type and its
// bytes after the Next Header field (the chain fills that field in).
type ext struct {
	typ  uint8
	body []byte
}

// opts returns a hop-by-hop or destination options header holding the
// given option bytes, padded with PadN to a multiple of 8.
func opts(typ uint8, options ...byte) ext {
	b := append([]byte{0}, options...) // Hdr Ext Len, filled below
	if pad := (8 - (len(b)+1)%8) % 8; pad == 1 {
		b = append(b, ipv6.OptPad1)
	} else if pad > 1 {
		b = append(b, ipv6.OptPadN, byte(pad-2))
		b = append(b, make([]byte, pad-2)...)
	}
	b[0] = byte((len(b)+1)/8 - 1)
	return ext{typ: typ, body: b}
}

// routing returns a routing header of routing type rt with segments left
// sl and one address.
func routing(rt, sl uint8) ext {
	b := make([]byte, 23)
	b[0] = 2 // 24 bytes
	b[1] = rt
	b[2] = sl
	return ext{typ: ipv6.NextRouting, body: b}
}

// frag returns a fragment header.
func frag(offset int, more bool, id uint32) ext {
	b := make([]byte, 7)
	v := uint16(offset) &^ 7
	if more {
		v |= 1
	}
	binary.BigEndian.PutUint16(b[1:3], v)
	binary.BigEndian.PutUint32(b[3:7], id)
	return ext{typ: ipv6.NextFragment, body: b}
}

// packet builds a packet from s to d with the chain exts, then the upper
// layer proto and its bytes.
func packet(s, d ipv6.Addr, proto uint8, upper []byte, exts ...ext) ipv6.Packet {
	n := ipv6.HeaderLen + len(upper)
	for _, e := range exts {
		n += 1 + len(e.body)
	}
	b := make([]byte, n)
	first := proto
	if len(exts) > 0 {
		first = exts[0].typ
	}
	ipv6.Repr{Src: s, Dst: d, NextHeader: first, PayloadLen: n - ipv6.HeaderLen, HopLimit: 64}.Emit(ipv6.Packet(b))
	off := ipv6.HeaderLen
	for i, e := range exts {
		next := proto
		if i+1 < len(exts) {
			next = exts[i+1].typ
		}
		b[off] = next
		copy(b[off+1:], e.body)
		off += 1 + len(e.body)
	}
	copy(b[off:], upper)
	return ipv6.Packet(b)
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// udp returns a UDP-looking upper layer of n bytes (8-byte header first).
func udp(n int) []byte { return pattern(n) }

type timeouts struct {
	quotes [][]byte
	at     []time.Duration
}

func (t *timeouts) ReassemblyTimeout(now time.Duration, q []byte) {
	t.quotes = append(t.quotes, append([]byte(nil), q...))
	t.at = append(t.at, now)
}

func newReceiver(cfg ipv6.ReceiverConfig) (*ipv6.Receiver, *ipv6.Stats) {
	st := &ipv6.Stats{}
	rc, err := ipv6.NewReceiver(cfg, st)
	if err != nil {
		panic(err)
	}
	return rc, st
}
