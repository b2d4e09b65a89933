package nic

import "github.com/savanna-sim/savanna/internal/rss"

// ToeplitzTableHash exposes the precomputed-table hash to the tests, which
// check it against ToeplitzHash.
func ToeplitzTableHash(key, input []byte) uint32 { return rss.NewTable(key).Hash(input) }
