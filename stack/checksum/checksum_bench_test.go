package checksum_test

import (
	"testing"

	"github.com/savanna-sim/savanna/stack/checksum"
)

// BenchmarkAdd sums a jumbo segment's payload.
func BenchmarkAdd(b *testing.B) {
	buf := make([]byte, 8960)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	var s uint64
	for i := 0; i < b.N; i++ {
		s += checksum.Add(0, buf)
	}
	_ = s
}
