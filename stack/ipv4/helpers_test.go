package ipv4_test

import (
	"github.com/savanna-sim/savanna/stack/ipv4"
)

var (
	src = [4]byte{10, 0, 0, 2}
	dst = [4]byte{10, 0, 0, 1}
)

// datagram builds a checksummed datagram with a 20-byte header.
func datagram(r ipv4.Repr, payload []byte) ipv4.Packet {
	r.PayloadLen = len(payload)
	b := make([]byte, ipv4.MinHeaderLen+len(payload))
	r.Emit(ipv4.Packet(b), true)
	copy(b[ipv4.MinHeaderLen:], payload)
	return ipv4.Packet(b)
}

// fragment builds fragment [off, off+n) of payload with identification id.
func fragment(id uint16, payload []byte, off, n int, more bool) (ipv4.Packet, ipv4.Repr) {
	p := datagram(ipv4.Repr{Src: src, Dst: dst, Protocol: ipv4.ProtoUDP, TTL: 64, Ident: id, FragOffset: off, MoreFrags: more}, payload[off:off+n])
	r, err := ipv4.Parse(p, true)
	if err != nil {
		panic(err)
	}
	return p, r
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}
