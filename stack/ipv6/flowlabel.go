package ipv6

import (
	"crypto/sha256"
	"encoding/binary"
)

// FlowLabel returns the flow label of a transport connection (RFC 6437
// section 3): the same for every packet of the flow, uniformly
// distributed over 20 bits and not guessable by a third party, from a
// keyed hash of the 5-tuple and a secret of the stack instance, in the
// spirit of RFC 6437 appendix A. Zero is the unlabelled flow, so a hash
// of zero gives 1. SHA-256 costs about a microsecond, paid once per
// connection; it is deterministic, so the same secret gives the same
// labels run after run.
func FlowLabel(secret [16]byte, src, dst Addr, proto uint8, srcPort, dstPort uint16) uint32 {
	var b [16 + 2*AddrLen + 1 + 4]byte
	copy(b[0:16], secret[:])
	copy(b[16:32], src[:])
	copy(b[32:48], dst[:])
	b[48] = proto
	binary.BigEndian.PutUint16(b[49:51], srcPort)
	binary.BigEndian.PutUint16(b[51:53], dstPort)
	h := sha256.Sum256(b[:])
	v := binary.BigEndian.Uint32(h[:4]) & 0xfffff
	if v == 0 {
		v = 1
	}
	return v
}
