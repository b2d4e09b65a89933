//go:build !linux

package ringdev

// dataRooms returns n bytes of Go heap for a pool's data rooms.
func dataRooms(n int) (mem []byte, release func()) { return make([]byte, n), func() {} }

func unmapWhenUnreachable(*Mempool, func()) {}
