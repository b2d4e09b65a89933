package rss

import "math/bits"

// KeyLen is the length of the standard Toeplitz key (40 bytes, enough
// for an IPv6 4-tuple of 36 bytes plus the 4-byte window).
const KeyLen = 40

// MaxInput is the longest hash input: an IPv6 4-tuple (two 16-byte
// addresses and two 2-byte ports).
const MaxInput = 36

// MicrosoftKey returns the default Toeplitz key published by Microsoft
// in "Verifying the RSS Hash Calculation", the key NIC drivers and
// DPDK's test_thash use by default. It returns a fresh copy so callers
// cannot change the default.
func MicrosoftKey() []byte {
	return []byte{
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
		0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
		0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
		0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
		0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	}
}

// Toeplitz computes the Toeplitz hash of input under key as the
// Microsoft RSS specification defines it: for every bit of input that is
// set, from the most significant bit of input[0] on, the 32-bit window of
// the key starting at that bit position is XORed into the result. Input
// is the bytes in the order the RSS specification gives: source address,
// destination address, then source port and destination port, all in
// network byte order (see Tuple).
//
// The key must hold at least len(input)+4 bytes; key bits past its end
// are taken as zero (so a short key never panics, it just hashes
// differently). The function does not allocate.
func Toeplitz(key, input []byte) uint32 {
	// k holds the 64 key bits starting at the current input byte's
	// first bit; the window for bit j of the byte (0 = most
	// significant) is then bits j..j+31 of k from the top.
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(key) {
			k |= uint64(key[i])
		}
	}
	var result uint32
	for i, b := range input {
		// Visit only the set bits, most significant first.
		for b != 0 {
			j := bits.LeadingZeros8(b)
			result ^= uint32(k >> (32 - j))
			b &^= 0x80 >> j
		}
		k <<= 8
		if i+8 < len(key) {
			k |= uint64(key[i+8])
		}
	}
	return result
}

// Table is the Toeplitz hash of one key precomputed per input byte
// position and value, as NIC drivers' software RSS and DPDK's rte_thash
// do to avoid the bit loop: the hash of an input is the XOR of one entry
// per byte. It covers inputs up to MaxInput bytes. A Table is 36 KiB:
// build it once per key (NewTable) and keep it with the key.
type Table [MaxInput][256]uint32

// NewTable precomputes key's table.
func NewTable(key []byte) *Table {
	t := new(Table)
	var one [MaxInput]byte
	for i := range t {
		for bit := 0; bit < 8; bit++ {
			one[i] = 0x80 >> bit
			h := Toeplitz(key, one[:i+1])
			one[i] = 0
			// Entries for every value with this bit set get h.
			for v := 0; v < 256; v++ {
				if v&(0x80>>bit) != 0 {
					t[i][v] ^= h
				}
			}
		}
	}
	return t
}

// Hash returns the Toeplitz hash of input under the table's key; bytes
// past MaxInput are ignored. It equals Toeplitz(key, input) for inputs of
// at most MaxInput bytes.
func (t *Table) Hash(input []byte) uint32 {
	var h uint32
	for i, b := range input[:min(len(input), len(t))] {
		h ^= t[i][b]
	}
	return h
}
