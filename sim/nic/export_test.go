package nic

// ToeplitzTableHash exposes the precomputed-table hash to the tests, which
// check it against ToeplitzHash.
func ToeplitzTableHash(key, input []byte) uint32 { return newToeplitzTable(key).hash(input) }
