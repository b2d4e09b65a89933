package numa_test

import (
	"testing"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/numa"
)

func BenchmarkAllocFree2M(b *testing.B) {
	t, err := numa.Preset("kunpeng920-4826-2p")
	if err != nil {
		b.Fatal(err)
	}
	m, err := numa.NewMemory(t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r, err := m.Alloc(hw.AllocRequest{Node: i & 3, Size: 64 << 10, Contiguous: true, Owner: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Free(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRemoteBytes(b *testing.B) {
	t, err := numa.Preset("kunpeng920-4826-2p")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var sink int64
	for i := 0; b.Loop(); i++ {
		sink += t.RemoteBytes(i%96, i&3, 1500)
	}
	_ = sink
}
