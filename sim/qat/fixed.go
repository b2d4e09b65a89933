package qat

import "io"

// fixedEncoder writes deflate with the fixed Huffman code of RFC 1951
// section 3.2.6 (BTYPE=01), as QAT does for CPA_DC_HT_STATIC: a greedy
// LZ77 match finder (one hash candidate, like a level-1 search) and every
// symbol coded with the fixed code. klauspost/compress has no fixed-code
// mode (its Huffman-only mode still builds dynamic tables), hence this.
type fixedEncoder struct {
	t     deflateTables
	head  []int32 // hash of 4 bytes -> position+1
	lcode [288]uint16
	llen  [288]uint8
	dcode [30]uint16
	// bit writer
	buf   []byte
	bits  uint64
	nbits uint
	w     io.Writer
	err   error
}

const fixedHashBits = 15

func newFixedEncoder() *fixedEncoder {
	e := &fixedEncoder{t: newDeflateTables(), head: make([]int32, 1<<fixedHashBits)}
	e.llen = fixedLitLengths()
	canonicalCodes(e.llen[:], e.lcode[:])
	var dl [30]uint8
	for i := range dl {
		dl[i] = 5
	}
	canonicalCodes(dl[:], e.dcode[:])
	return e
}

func (e *fixedEncoder) writeBits(v uint64, n uint) {
	e.bits |= v << e.nbits
	e.nbits += n
	for e.nbits >= 8 {
		e.buf = append(e.buf, byte(e.bits))
		e.bits >>= 8
		e.nbits -= 8
	}
	if len(e.buf) >= 64<<10 {
		e.flushBuf()
	}
}

func (e *fixedEncoder) flushBuf() {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *fixedEncoder) lit(s int) { e.writeBits(uint64(e.lcode[s]), uint(e.llen[s])) }

func (e *fixedEncoder) match(length, dist int) {
	c := 28
	for int(e.t.lbase[c]) > length {
		c--
	}
	e.lit(257 + c)
	if x := e.t.lext[c]; x > 0 {
		e.writeBits(uint64(length-int(e.t.lbase[c])), uint(x))
	}
	d := 29
	for int(e.t.dbase[d]) > dist {
		d--
	}
	e.writeBits(uint64(e.dcode[d]), 5)
	if x := e.t.dext[d]; x > 0 {
		e.writeBits(uint64(dist-int(e.t.dbase[d])), uint(x))
	}
}

func hash4(b []byte) uint32 {
	v := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	return (v * 0x9E3779B1) >> (32 - fixedHashBits)
}

// encode writes src as one fixed-Huffman block. final sets BFINAL;
// otherwise the block is followed by an empty stored block (a sync
// flush) so that the output ends at a byte boundary and the next op's
// output can follow it in the same stream. windowLog bounds distances.
func (e *fixedEncoder) encode(w io.Writer, src []byte, windowLog int, final bool) error {
	e.w, e.err, e.buf, e.bits, e.nbits = w, nil, e.buf[:0], 0, 0
	clear(e.head)
	maxDist := 1 << windowLog
	hdr := uint64(1 << 1) // BTYPE=01
	if final {
		hdr |= 1
	}
	e.writeBits(hdr, 3)
	for i := 0; i < len(src) && e.err == nil; {
		if i+4 <= len(src) {
			h := hash4(src[i:])
			cand := int(e.head[h]) - 1
			e.head[h] = int32(i + 1)
			if cand >= 0 && i-cand <= maxDist &&
				src[cand] == src[i] && src[cand+1] == src[i+1] && src[cand+2] == src[i+2] && src[cand+3] == src[i+3] {
				l := 4
				for l < 258 && i+l < len(src) && src[cand+l] == src[i+l] {
					l++
				}
				e.match(l, i-cand)
				for j := i + 1; j < i+l && j+4 <= len(src); j++ {
					e.head[hash4(src[j:])] = int32(j + 1)
				}
				i += l
				continue
			}
		}
		e.lit(int(src[i]))
		i++
	}
	e.lit(256) // end of block
	if !final {
		// Sync flush: an empty stored block, BFINAL=0 BTYPE=00, aligned,
		// LEN=0 NLEN=0xffff.
		e.writeBits(0, 3)
		if e.nbits > 0 {
			e.writeBits(0, 8-e.nbits)
		}
		e.writeBits(0xffff0000, 32)
	} else if e.nbits > 0 {
		e.writeBits(0, 8-e.nbits)
	}
	e.flushBuf()
	return e.err
}
