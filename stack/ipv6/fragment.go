package ipv6

// Fragments splits a packet that does not fit a path MTU into fragments
// (RFC 8200 section 4.5) without allocating: Len fragments, the i-th
// FragmentLen(i) bytes long, each written by Emit into a buffer of the
// caller's (an mbuf's data room). The stack sends no extension headers,
// so the unfragmentable part is the fixed header alone.
type Fragments struct {
	r       Repr
	payload []byte
	per     int // data bytes per fragment but the last, a multiple of 8
	n       int
	id      uint32
}

// NewFragments prepares the fragments of the packet with header r (its
// NextHeader the upper-layer protocol, PayloadLen ignored) and payload,
// for a path MTU mtu, with identification id. A packet that fits mtu is
// not fragmented: Len is 1 and Emit writes it whole, without a fragment
// header, since RFC 8021 deprecates atomic fragments on output.
func NewFragments(r Repr, payload []byte, mtu int, id uint32) (Fragments, error) {
	if mtu < MinMTU {
		return Fragments{}, ErrMTU
	}
	f := Fragments{r: r, payload: payload, id: id}
	if HeaderLen+len(payload) <= mtu {
		if len(payload) > MaxPayloadLen {
			return Fragments{}, ErrTooLong
		}
		f.n = 1
		return f, nil
	}
	if len(payload)+FragHeaderLen > MaxPayloadLen {
		return Fragments{}, ErrTooLong
	}
	// Each fragment but the last carries a multiple of 8 bytes (RFC 8200
	// section 4.5), as many as the MTU allows.
	f.per = (mtu - HeaderLen - FragHeaderLen) &^ 7
	f.n = (len(payload) + f.per - 1) / f.per
	return f, nil
}

// Len returns the number of packets to send.
func (f Fragments) Len() int { return f.n }

// Fragmented reports whether the packet is split (Len above 1 and
// fragment headers written).
func (f Fragments) Fragmented() bool { return f.per > 0 }

// FragmentLen returns the length of packet i, headers included.
func (f Fragments) FragmentLen(i int) int {
	if !f.Fragmented() {
		return HeaderLen + len(f.payload)
	}
	return HeaderLen + FragHeaderLen + f.dataLen(i)
}

func (f Fragments) dataLen(i int) int {
	if i < f.n-1 {
		return f.per
	}
	return len(f.payload) - f.per*(f.n-1)
}

// Emit writes packet i into b (at least FragmentLen(i) bytes) and returns
// its length.
func (f Fragments) Emit(i int, b []byte) int {
	r := f.r
	if !f.Fragmented() {
		r.PayloadLen = len(f.payload)
		r.Emit(Packet(b))
		copy(b[HeaderLen:], f.payload)
		return HeaderLen + len(f.payload)
	}
	n := f.dataLen(i)
	off := i * f.per
	nh := r.NextHeader
	r.NextHeader = NextFragment
	r.PayloadLen = FragHeaderLen + n
	r.Emit(Packet(b))
	emitFragHeader(b[HeaderLen:], nh, off, i < f.n-1, f.id)
	copy(b[HeaderLen+FragHeaderLen:], f.payload[off:off+n])
	return HeaderLen + FragHeaderLen + n
}

// Fragment returns the packets that carry payload with header r over a
// path MTU mtu (see NewFragments), each in a buffer of its own, and
// counts them in stats (nil for none). It allocates; the output path uses
// NewFragments and Emit into mbufs.
func Fragment(r Repr, payload []byte, mtu int, id uint32, stats *Stats) ([]Packet, error) {
	f, err := NewFragments(r, payload, mtu, id)
	if stats == nil {
		stats = &Stats{}
	}
	if err != nil {
		stats.OutFragFails++
		return nil, err
	}
	out := make([]Packet, f.Len())
	for i := range out {
		b := make([]byte, f.FragmentLen(i))
		f.Emit(i, b)
		out[i] = b
	}
	if f.Fragmented() {
		stats.OutFragReqds++
		stats.OutFragOKs++
		stats.OutFragCreates += uint64(f.Len())
	}
	return out, nil
}
