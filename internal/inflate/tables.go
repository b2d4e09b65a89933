package inflate

// The RFC 1951 3.2.5 tables, as functions over array literals so the
// package holds no mutable state.

func lengthBase(i int) int {
	return [29]int{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
		35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}[i]
}

func lengthExtra(i int) uint {
	return [29]uint{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
		3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}[i]
}

func distBase(i int) int {
	return [30]int{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
		257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
		8193, 12289, 16385, 24577}[i]
}

func distExtra(i int) uint {
	return [30]uint{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
		7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}[i]
}

// FixedLitLengths returns the code lengths of the fixed literal/length
// code (RFC 1951 section 3.2.6): 8 bits for 0..143, 9 for 144..255, 7 for
// 256..279, 8 for 280..287. It is exported for encoders of that code (the
// QAT model's fixed-Huffman compressor), so both ends share one table.
func FixedLitLengths() [288]uint8 {
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	return l
}

// codeLengthOrder is the order code-length code lengths are sent in.
func codeLengthOrder(i int) int {
	return [19]int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}[i]
}
