package tcp

import (
	"container/heap"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"math/rand/v2"
	"time"
)

// wireConfig describes the simulated path between two engines.
type wireConfig struct {
	rateBps   float64       // link rate, bits per second (0: infinite)
	latency   time.Duration // one-way propagation delay
	loss      float64       // drop probability per segment
	dup       float64       // duplication probability
	reorder   float64       // probability of an extra delay
	reorderBy time.Duration // that extra delay (max)
	corrupt   float64       // probability of one flipped bit
	seed      uint64
}

// Per-frame overhead on Ethernet beyond the TCP segment: IPv4 header 20,
// Ethernet header 14, FCS 4, preamble+SFD 8, inter-frame gap 12.
const frameOverhead = ipv4HeaderLen + 14 + 4 + 8 + 12

type delivery struct {
	at  time.Duration
	seq uint64
	to  int
	src IP
	dst IP
	seg []byte
}

type deliveryHeap []*delivery

func (h deliveryHeap) Len() int { return len(h) }
func (h deliveryHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h deliveryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *deliveryHeap) Push(x any)   { *h = append(*h, x.(*delivery)) }
func (h *deliveryHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}

// wire joins two stacks (index 0 and 1) through a deterministic event
// loop keyed by virtual time.
type wire struct {
	cfg       wireConfig
	rng       *rand.Rand
	q         deliveryHeap
	seq       uint64
	now       time.Duration
	stacks    [2]*Stack
	addrs     [2]IP
	busyUntil [2]time.Duration
	sent      [2]int
	dropped   int
	corrupted int
	pool      [][]byte
	maxSeg    int
	free      []*delivery
	// clientPort is the client's local port (0: ephemeral).
	clientPort uint16
}

type wireEnd struct {
	ipv4Network
	w    *wire
	from int
}

func (e wireEnd) SendSegment(now time.Duration, src, dst IP, seg []byte) error {
	w := e.w
	w.sent[e.from]++
	if len(seg) > w.maxSeg {
		w.maxSeg = len(seg)
	}
	to := 1 - e.from
	var b []byte
	if n := len(w.pool); n > 0 {
		b = w.pool[n-1][:0]
		w.pool = w.pool[:n-1]
	}
	b = append(b, seg...)
	// Serialization at the link rate, then propagation.
	start := now
	if w.busyUntil[e.from] > start {
		start = w.busyUntil[e.from]
	}
	if w.cfg.rateBps > 0 {
		bits := float64(len(seg)+frameOverhead) * 8
		start += time.Duration(bits / w.cfg.rateBps * 1e9)
	}
	w.busyUntil[e.from] = start
	at := start + w.cfg.latency
	if w.cfg.loss > 0 && w.rng.Float64() < w.cfg.loss {
		w.dropped++
		w.pool = append(w.pool, b)
		return nil
	}
	bad := false
	if w.cfg.corrupt > 0 && w.rng.Float64() < w.cfg.corrupt {
		bit := w.rng.IntN(len(b) * 8)
		b[bit/8] ^= 1 << (bit % 8)
		w.corrupted++
		bad = true
	}
	if w.cfg.reorder > 0 && w.rng.Float64() < w.cfg.reorder {
		at += time.Duration(w.rng.Int64N(int64(w.cfg.reorderBy) + 1))
	}
	w.push(at, to, src, dst, b)
	if w.cfg.dup > 0 && w.rng.Float64() < w.cfg.dup {
		w.push(at+time.Microsecond, to, src, dst, append([]byte(nil), b...))
		if bad {
			w.corrupted++
		}
	}
	return nil
}

func (w *wire) push(at time.Duration, to int, src, dst IP, b []byte) {
	w.seq++
	var d *delivery
	if n := len(w.free); n > 0 {
		d = w.free[n-1]
		w.free = w.free[:n-1]
	} else {
		d = new(delivery)
	}
	*d = delivery{at: at, seq: w.seq, to: to, src: src, dst: dst, seg: b}
	heap.Push(&w.q, d)
}

func newWire(cfg wireConfig, ccfg [2]Config) *wire {
	return newWireOver(cfg, ccfg, [2]IP{IPFrom4([4]byte{10, 0, 0, 1}), IPFrom4([4]byte{10, 0, 0, 2})},
		func(e wireEnd) Output { return e })
}

// newWireOver is newWire with the two engines at addrs, each with the
// Output end makes of its end of the wire (another network layer).
func newWireOver(cfg wireConfig, ccfg [2]Config, addrs [2]IP, end func(wireEnd) Output) *wire {
	w := &wire{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.seed, 7))}
	w.addrs = addrs
	for i := 0; i < 2; i++ {
		s, err := New(ccfg[i], rand.New(rand.NewPCG(cfg.seed, uint64(i+100))), end(wireEnd{w: w, from: i}))
		if err != nil {
			panic(err)
		}
		w.stacks[i] = s
	}
	return w
}

// step advances to the next event (delivery or timer) no later than
// limit; it returns false when nothing is left before limit.
func (w *wire) step(limit time.Duration) bool {
	next := limit + 1
	if len(w.q) > 0 {
		next = w.q[0].at
	}
	for i := 0; i < 2; i++ {
		if d := w.stacks[i].Poll(w.now); d < next {
			next = d
		}
	}
	if next > limit {
		return false
	}
	if next > w.now {
		w.now = next
	}
	for len(w.q) > 0 && w.q[0].at <= w.now {
		d := heap.Pop(&w.q).(*delivery)
		w.stacks[d.to].Input(w.now, d.src, d.dst, d.seg)
		w.pool = append(w.pool, d.seg)
		d.seg = nil
		w.free = append(w.free, d)
	}
	for i := 0; i < 2; i++ {
		w.stacks[i].Poll(w.now)
	}
	return true
}

// transferResult reports a one-way bulk transfer.
type transferResult struct {
	sentHash, recvHash [32]byte
	bytes              int64
	received           int64
	done               bool
	elapsed            time.Duration // from connect to the last byte read
	firstByte          time.Duration
	err                error
}

// transfer sends size bytes from stack 0 to stack 1 and closes; the
// receiver reads everything until EOF. It stops at limit (virtual time).
func (w *wire) transfer(size int64, limit time.Duration, dataSeed uint64) transferResult {
	var res transferResult
	res.bytes = size
	l, err := w.stacks[1].Listen(w.addrs[1], 5001, 16)
	if err != nil {
		res.err = err
		return res
	}
	cli, err := w.stacks[0].Connect(w.now, Addr{w.addrs[0], w.clientPort}, Addr{w.addrs[1], 5001})
	if err != nil {
		res.err = err
		return res
	}
	start := w.now
	gen := rand.New(rand.NewPCG(dataSeed, 1))
	hs, hr := sha256.New(), sha256.New()
	chunk := make([]byte, 256<<10)
	pending := chunk[:0]
	var written int64
	closed := false
	var srv *Conn
	rbuf := make([]byte, 256<<10)
	for {
		// Application: write what fits, read what is there.
		for !closed && cli.Connected() {
			if len(pending) == 0 {
				if written == size {
					_ = cli.CloseWrite()
					closed = true
					break
				}
				n := int64(len(chunk))
				if size-written < n {
					n = size - written
				}
				pending = chunk[:n]
				for i := 0; i+8 <= len(pending); i += 8 {
					v := gen.Uint64()
					for k := 0; k < 8; k++ {
						pending[i+k] = byte(v >> (8 * k))
					}
				}
				for i := len(pending) &^ 7; i < len(pending); i++ {
					pending[i] = byte(gen.Uint32())
				}
				hs.Write(pending)
				written += n
			}
			n, err := cli.Write(pending)
			if err != nil {
				if !errors.Is(err, ErrWouldBlock) {
					res.err = err
					return res
				}
				break
			}
			pending = pending[n:]
		}
		if cli.Err() != nil {
			res.err = cli.Err()
			return res
		}
		if srv == nil {
			if c, ok := l.Accept(); ok {
				srv = c
			}
		}
		if srv != nil {
			for {
				n, err := srv.Read(rbuf)
				if n > 0 {
					if res.received == 0 {
						res.firstByte = w.now - start
					}
					hr.Write(rbuf[:n])
					res.received += int64(n)
				}
				if err == io.EOF {
					res.done = true
					res.elapsed = w.now - start
					copy(res.sentHash[:], hs.Sum(nil))
					copy(res.recvHash[:], hr.Sum(nil))
					_ = srv.Close()
					return res
				}
				if err != nil {
					if !errors.Is(err, ErrWouldBlock) {
						res.err = err
						return res
					}
					break
				}
			}
		}
		if !w.step(limit) {
			copy(res.sentHash[:], hs.Sum(nil))
			copy(res.recvHash[:], hr.Sum(nil))
			return res
		}
	}
}

// streamer writes a deterministic byte stream into a Conn and hashes it.
type streamer struct {
	gen     *rand.Rand
	h       hash.Hash
	size    int64
	written int64
	pending []byte
	chunk   []byte
	closed  bool
}

func newStreamer(size int64, seed uint64) *streamer {
	return &streamer{gen: rand.New(rand.NewPCG(seed, 2)), h: sha256.New(), size: size, chunk: make([]byte, 64<<10)}
}

func (st *streamer) pump(c *Conn) {
	for !st.closed && c.Connected() {
		if len(st.pending) == 0 {
			if st.written == st.size {
				_ = c.CloseWrite()
				st.closed = true
				return
			}
			n := int64(len(st.chunk))
			if st.size-st.written < n {
				n = st.size - st.written
			}
			st.pending = st.chunk[:n]
			for i := range st.pending {
				st.pending[i] = byte(st.gen.Uint32())
			}
			st.h.Write(st.pending)
			st.written += n
		}
		n, err := c.Write(st.pending)
		if err != nil {
			return
		}
		st.pending = st.pending[n:]
	}
}

// drainer reads a Conn to EOF and hashes what it read.
type drainer struct {
	h    hash.Hash
	n    int64
	eof  bool
	rbuf []byte
}

func newDrainer() *drainer { return &drainer{h: sha256.New(), rbuf: make([]byte, 64<<10)} }

func (d *drainer) pump(c *Conn) {
	for !d.eof {
		n, err := c.Read(d.rbuf)
		d.h.Write(d.rbuf[:n])
		d.n += int64(n)
		if err == io.EOF {
			d.eof = true
		}
		if err != nil || n == 0 {
			return
		}
	}
}
