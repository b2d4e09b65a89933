package nic

// ring is a fixed-size FIFO of a power-of-two size, the shape of a NIC
// descriptor ring: a producer index and a consumer index that run freely
// and are masked on use. It never allocates after creation.
type ring[T any] struct {
	slots      []T
	mask       uint32
	head, tail uint32 // head: next to pop; tail: next to push
}

func newRing[T any](size int) ring[T] {
	return ring[T]{slots: make([]T, size), mask: uint32(size - 1)}
}

func (r *ring[T]) len() int   { return int(r.tail - r.head) }
func (r *ring[T]) cap() int   { return len(r.slots) }
func (r *ring[T]) full() bool { return r.len() == len(r.slots) }

// push appends v and reports whether there was room.
func (r *ring[T]) push(v T) bool {
	if r.full() {
		return false
	}
	r.slots[r.tail&r.mask] = v
	r.tail++
	return true
}

// peek returns the oldest element; the ring must not be empty.
func (r *ring[T]) peek() *T { return &r.slots[r.head&r.mask] }

// pop removes and returns the oldest element; the ring must not be empty.
func (r *ring[T]) pop() T {
	var zero T
	i := r.head & r.mask
	v := r.slots[i]
	r.slots[i] = zero
	r.head++
	return v
}

// isPowerOfTwo reports whether n is a positive power of two.
func isPowerOfTwo(n int) bool { return n > 0 && n&(n-1) == 0 }

// queue is an unbounded FIFO on a ring that doubles when full: after it
// has grown to its working size it no longer allocates.
type queue[T any] struct {
	slots      []T
	head, size int
}

func (q *queue[T]) len() int { return q.size }

func (q *queue[T]) push(v T) {
	if q.size == len(q.slots) {
		grown := make([]T, max(16, 2*len(q.slots)))
		for i := 0; i < q.size; i++ {
			grown[i] = q.slots[(q.head+i)%len(q.slots)]
		}
		q.slots, q.head = grown, 0
	}
	q.slots[(q.head+q.size)%len(q.slots)] = v
	q.size++
}

// peek returns the oldest element; the queue must not be empty.
func (q *queue[T]) peek() T { return q.slots[q.head] }

// pop removes and returns the oldest element; the queue must not be
// empty.
func (q *queue[T]) pop() T {
	v := q.slots[q.head]
	var zero T
	q.slots[q.head] = zero
	q.head = (q.head + 1) % len(q.slots)
	q.size--
	return v
}
