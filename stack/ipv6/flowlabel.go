package ipv6

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/stack/internal/siphash"
)

// FlowLabel returns the flow label of a transport connection (RFC 6437
// section 3): the same for every packet of the flow, uniformly
// distributed over 20 bits and not predictable across flows by a third
// party, as section 3 asks and section 3's "stateless" method allows: a
// keyed hash of the 5-tuple under a secret of the stack instance
// (appendix A suggests exactly this shape; the keyed hash here is
// SipHash-2-4, a pseudo-random function under the 128-bit secret, as
// Linux's automatic labels are). Zero is the unlabelled flow, so a hash
// of zero gives 1. It costs some tens of nanoseconds and no allocation,
// so a caller may compute it per segment instead of keeping it; it is
// deterministic, so the same secret gives the same labels run after
// run.
func FlowLabel(secret [16]byte, src, dst Addr, proto uint8, srcPort, dstPort uint16) uint32 {
	var b [2*AddrLen + 1 + 4]byte
	copy(b[0:16], src[:])
	copy(b[16:32], dst[:])
	b[32] = proto
	binary.BigEndian.PutUint16(b[33:35], srcPort)
	binary.BigEndian.PutUint16(b[35:37], dstPort)
	h := siphash.Sum64(binary.LittleEndian.Uint64(secret[0:8]), binary.LittleEndian.Uint64(secret[8:16]), b[:])
	// Fold the 64 bits so that every one of them reaches the label.
	v := uint32(h^h>>20^h>>40) & 0xfffff
	if v == 0 {
		v = 1
	}
	return v
}
