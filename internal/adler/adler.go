// Package adler continues an Adler-32 checksum (RFC 1950 section 8.2) from
// a running value. hash/adler32 cannot be seeded, and the shim, the QAT
// model and the DPDK backend all chain a stream's checksum across
// requests.
package adler

// Update continues the Adler-32 adler over p. The checksum of nothing is
// 1, so a stream starts from Update(1, p).
func Update(adler uint32, p []byte) uint32 {
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
