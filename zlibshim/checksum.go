package zlibshim

import "hash/crc32"

// adler32Update continues an Adler-32 (RFC 1950 8.2) over p. hash/adler32
// has no seeded update, and a stream's checksum runs across requests some
// of which the device summed.
func adler32Update(adler uint32, p []byte) uint32 {
	const (
		mod  = 65521
		nmax = 5552 // largest n with 255n(n+1)/2 + (n+1)(mod-1) < 2^32
	)
	s1, s2 := adler&0xffff, adler>>16
	for len(p) > 0 {
		var q []byte
		if len(p) > nmax {
			p, q = p[:nmax], p[nmax:]
		}
		for len(p) >= 4 {
			s1 += uint32(p[0])
			s2 += s1
			s1 += uint32(p[1])
			s2 += s1
			s1 += uint32(p[2])
			s2 += s1
			s1 += uint32(p[3])
			s2 += s1
			p = p[4:]
		}
		for _, x := range p {
			s1 += uint32(x)
			s2 += s1
		}
		s1 %= mod
		s2 %= mod
		p = q
	}
	return s2<<16 | s1
}

// crc32Update continues the gzip CRC-32 (IEEE) over p.
func crc32Update(crc uint32, p []byte) uint32 { return crc32.Update(crc, crc32.IEEETable, p) }
