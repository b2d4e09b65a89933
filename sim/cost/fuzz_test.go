package cost_test

import (
	"testing"

	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/sim/cost"
)

// FuzzParse feeds arbitrary bytes to the cost-file parser, which reads
// files users write: it must return a model or an error, never panic,
// and a model it returns must have every price's fields in range.
func FuzzParse(f *testing.F) {
	for _, key := range cost.ModelKeys() {
		data, err := cost.ModelBytes(key)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("version: 1\nname: x\ncosts:\n  syscall: {value: 1, unit: ns, source: s, spread: 0.2, spread_source: t}\n"))
	f.Add([]byte("version: 1\nfrozen: true\ncosts: {syscall: {value: 1, unit: ns, source: s}}\n"))
	f.Add([]byte("version: 1\ncosts: {syscall: {value: .nan, unit: ns, source: s, uncertainty: .inf}}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	l := cost.For(costops.Table())
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := l.Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		for op := range m.Entries {
			e := m.Entries[op]
			if e.Uncertainty < 0 || e.Uncertainty > 1 || e.Spread < 0 || e.Spread > 4 {
				t.Fatalf("op %d: fields out of range: %+v", op, e)
			}
		}
		if len(m.Digest()) != 64 {
			t.Fatalf("digest %q", m.Digest())
		}
	})
}
