package inflate

const (
	maxBits  = 15 // longest code (RFC 1951 3.2.2)
	fastBits = 9  // codes this long or shorter decode with one lookup
)

// huffman is a canonical Huffman code as puff.c keeps it: the number of
// codes of each length and the symbols ordered by code, plus a table
// indexed by the next fastBits input bits (LSB first) holding
// symbol<<4 | length, or 0 when the code is longer or invalid.
type huffman struct {
	count  [maxBits + 1]uint16
	symbol [320]uint16
	fast   [1 << fastBits]uint16
}

// build makes the code for the given code lengths. It returns 0 for a
// complete code, a positive number for an incomplete one and a negative
// one for an over-subscribed one (puff.c's construct).
func (h *huffman) build(lengths []uint8) int {
	h.count = [maxBits + 1]uint16{}
	for _, l := range lengths {
		h.count[l]++
	}
	if int(h.count[0]) == len(lengths) {
		h.fast = [1 << fastBits]uint16{}
		return 0 // no codes: complete, but any decode fails
	}
	left := 1
	for l := 1; l <= maxBits; l++ {
		left <<= 1
		left -= int(h.count[l])
		if left < 0 {
			return left
		}
	}
	var offs [maxBits + 2]uint16
	for l := 1; l <= maxBits; l++ {
		offs[l+1] = offs[l] + h.count[l]
	}
	for sym, l := range lengths {
		if l != 0 {
			h.symbol[offs[l]] = uint16(sym)
			offs[l]++
		}
	}
	h.fast = [1 << fastBits]uint16{}
	code, idx := 0, 0
	for l := 1; l <= fastBits; l++ {
		for k := 0; k < int(h.count[l]); k++ {
			e := h.symbol[idx]<<4 | uint16(l)
			for j := reverse(code, l); j < 1<<fastBits; j += 1 << l {
				h.fast[j] = e
			}
			code++
			idx++
		}
		code <<= 1
	}
	return left
}

// reverse reverses the low n bits of code: deflate sends Huffman codes
// most significant bit first into an LSB-first bit stream.
func reverse(code, n int) int {
	r := 0
	for range n {
		r = r<<1 | code&1
		code >>= 1
	}
	return r
}
