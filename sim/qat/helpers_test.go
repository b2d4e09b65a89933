package qat_test

import (
	"fmt"
	"github.com/savanna-sim/savanna/sim/cost"
	"hash/crc32"
	"math/rand/v2"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
)

// fakeHuge is a test-only hw.HugeMemory: a count of 2 MiB pages per node.
type fakeHuge struct {
	free   map[int]int64
	next   uint64
	allocs int
	frees  int
}

func newFakeHuge(pagesPerNode int64, nodes int) *fakeHuge {
	h := &fakeHuge{free: map[int]int64{}, next: 1 << 30}
	for n := 0; n < nodes; n++ {
		h.free[n] = pagesPerNode
	}
	return h
}

func (h *fakeHuge) Alloc(req hw.AllocRequest) (*hw.Region, error) {
	if req.Contiguous && req.Size > req.PageSize {
		return nil, fmt.Errorf("node %d: %d bytes: %w", req.Node, req.Size, hw.ErrNotContiguous)
	}
	pages := (req.Size + req.PageSize - 1) / req.PageSize
	if h.free[req.Node] < pages {
		return nil, fmt.Errorf("node %d: %d pages wanted, %d free: %w", req.Node, pages, h.free[req.Node], hw.ErrNoHugepages)
	}
	h.free[req.Node] -= pages
	h.allocs++
	r := &hw.Region{Node: req.Node, Size: req.Size, PageSize: req.PageSize, Pages: pages, Contiguous: req.Contiguous, Owner: req.Owner, IOVA: h.next}
	h.next += uint64(pages * req.PageSize)
	return r, nil
}

func (h *fakeHuge) Free(r *hw.Region) error {
	h.free[r.Node] += r.Pages
	h.frees++
	return nil
}

func (h *fakeHuge) NodeOf(cpu int) int { return 0 }

// newService builds a service of the given devices, untimed unless
// processes are bound.
func newService(mem hw.HugeMemory, devs ...qat.DeviceConfig) *qat.Service {
	s, err := qat.NewService(qat.Config{Devices: devs}, qat.Options{Memory: mem, RNG: rand.New(rand.NewPCG(7, 7))})
	if err != nil {
		panic(err)
	}
	return s
}

// corpus returns n bytes of compressible, text-like data.
func corpus(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	words := []string{"the ", "quick ", "brown ", "fox ", "jumps ", "over ", "lazy ", "dog ", "GET /index.html ", "HTTP/1.1 200 OK\r\n", "<div class=\"x\">", "</div>\n"}
	b := make([]byte, 0, n+32)
	for len(b) < n {
		if r.IntN(10) == 0 {
			b = append(b, byte(r.IntN(256)))
			continue
		}
		b = append(b, words[r.IntN(len(words))]...)
	}
	return b[:n]
}

// run enqueues op on inst and dequeues it (untimed or with time enough).
func run(inst hw.CompressInstance, op *hw.CompOp) *hw.CompOp {
	dev := inst.Device()
	if dev.EnqueueBurst(inst.QueuePair(), []*hw.CompOp{op}) != 1 {
		panic("enqueue refused")
	}
	out := make([]*hw.CompOp, 1)
	for i := 0; i < 1000; i++ {
		if dev.DequeueBurst(inst.QueuePair(), out) == 1 {
			return out[0]
		}
		if w, ok := dev.(hw.CompletionWaiter); ok {
			w.WaitCompletion(inst.QueuePair(), 1<<40)
		}
	}
	panic("no completion")
}

func crc32ieee(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// priceMeter is a test meter whose clock moves with what is charged, as a
// simulated core's does, at a price per op.
type priceMeter struct {
	hw.CountingMeter
	price map[hw.CostOp]time.Duration
}

func newPriceMeter() *priceMeter {
	return &priceMeter{price: map[hw.CostOp]time.Duration{
		hw.CostQATSubmit: 200 * time.Nanosecond, hw.CostQATPoll: 100 * time.Nanosecond, hw.CostQATPollIdle: 40 * time.Nanosecond,
		hw.CostSyscallFutex: 300 * time.Nanosecond, hw.CostContextSwitch: 1500 * time.Nanosecond, hw.CostWakeup: 800 * time.Nanosecond,
		hw.CostSyscallOpen: 1500 * time.Nanosecond, hw.CostSyscallIoctl: 400 * time.Nanosecond, hw.CostSyscallMmap: 2000 * time.Nanosecond,
		cost.CompactionPage: 2500 * time.Nanosecond, cost.PageAlloc: 150 * time.Nanosecond, hw.CostUSDMAlloc: 80 * time.Nanosecond,
	}}
}

func (m *priceMeter) Charge(op hw.CostOp, n int64) {
	m.CountingMeter.Charge(op, n)
	m.Clock += m.price[op] * time.Duration(n)
}
