package sockring

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Storage is a size-classed free list of ring storage shared by the
// rings of one stack instance (a real-time lcore's connections): a ring
// that has one (Config.Storage) takes its storage from it on the first
// write and gives it back when the stack thread finds it drained
// (Pipe.ReleaseIdle), so that an idle connection holds no ring memory at
// all, as a Linux socket holds no skbs when its queues are empty. Classes are the ring sizes, powers of
// two from MinStorage; each keeps at most storageClassBytes of spares
// (so many 64-byte rings, few large ones), the rest going to the garbage
// collector. Safe for concurrent use: producers and consumers run on
// the application's goroutines and on the lcore.
type Storage struct {
	classes [storageClasses]storageClass
}

// storageClasses covers MinStorage (64 B) to 64 MiB, the largest ring
// gonet.Options accepts.
const storageClasses = 21

// storageClassBytes bounds the spares each class keeps, as stack/tcp's
// spare list of first-size buffers keeps at most 1 MiB.
const storageClassBytes = 1 << 20

type storageClass struct {
	// hot is a spare taken and given back with one atomic swap, the
	// common case of a ring that drains just before another (or the
	// same) takes storage again, as a ping-pong's do; the list behind
	// the mutex holds the rest.
	hot   atomic.Pointer[store]
	_     [56]byte
	mu    sync.Mutex
	spare []*store
	// gets, news and puts count takes, takes that had to allocate and
	// returns (for StorageStats).
	gets, news, puts, dropped uint64
	hotGets, hotPuts          atomic.Uint64
}

// StorageStats are a Storage's counters, summed over its classes.
type StorageStats struct {
	// Gets counts storage taken by rings, New those that found no spare
	// and allocated; Puts counts storage given back, Dropped those left
	// to the garbage collector because their class was full.
	Gets    uint64 `json:"gets"`
	New     uint64 `json:"new"`
	Puts    uint64 `json:"puts"`
	Dropped uint64 `json:"dropped"`
	// SpareBytes is the storage held for reuse now.
	SpareBytes int64 `json:"spare_bytes"`
}

// class returns the class of a power-of-two size n >= MinStorage.
func class(n int) int { return bits.Len(uint(n)) - bits.Len(uint(MinStorage)) }

// get returns storage of n bytes (a power of two), a spare when its
// class has one. Spares are not cleared: a ring reads only bytes it wrote.
func (s *Storage) get(n int) *store {
	c := class(n)
	if c >= storageClasses {
		return &store{mask: uint64(n - 1), b: make([]byte, n)}
	}
	sc := &s.classes[c]
	if st := sc.hot.Swap(nil); st != nil {
		sc.hotGets.Add(1)
		return st
	}
	sc.mu.Lock()
	sc.gets++
	if k := len(sc.spare); k > 0 {
		st := sc.spare[k-1]
		sc.spare[k-1] = nil
		sc.spare = sc.spare[:k-1]
		sc.mu.Unlock()
		return st
	}
	sc.news++
	sc.mu.Unlock()
	return &store{mask: uint64(n - 1), b: make([]byte, n)}
}

// put keeps st for reuse, or leaves it to the garbage collector when its
// class holds storageClassBytes of spares already.
func (s *Storage) put(st *store) {
	c := class(len(st.b))
	if c >= storageClasses {
		return
	}
	sc := &s.classes[c]
	if sc.hot.CompareAndSwap(nil, st) {
		sc.hotPuts.Add(1)
		return
	}
	sc.mu.Lock()
	sc.puts++
	if (len(sc.spare)+1)*len(st.b) <= storageClassBytes {
		sc.spare = append(sc.spare, st)
	} else {
		sc.dropped++
	}
	sc.mu.Unlock()
}

// Stats returns the counters.
func (s *Storage) Stats() StorageStats {
	var st StorageStats
	for i := range s.classes {
		sc := &s.classes[i]
		sc.mu.Lock()
		st.Gets += sc.gets + sc.hotGets.Load()
		st.New += sc.news
		st.Puts += sc.puts + sc.hotPuts.Load()
		st.Dropped += sc.dropped
		spares := int64(len(sc.spare))
		if sc.hot.Load() != nil {
			spares++
		}
		st.SpareBytes += spares * int64(MinStorage<<i)
		sc.mu.Unlock()
	}
	return st
}
