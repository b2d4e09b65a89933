package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// RNG returns a random stream for the model called name. The stream
// depends only on the engine's seed and the name, so adding, removing or
// reordering other models never changes it.
func (e *Engine) RNG(name string) *rand.Rand {
	return rand.New(StreamSource(e.seed, name))
}

// StreamSource returns the PCG source of the stream (seed, name).
func StreamSource(seed uint64, name string) *rand.PCG {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return rand.NewPCG(seed, h.Sum64())
}
