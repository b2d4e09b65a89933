//go:build dpdk

package dpdk

import (
	"fmt"

	"github.com/savanna-sim/savanna/hw"
)

// Service implements hw.CompressService over opened compressdevs: each
// queue pair of each device is one instance, handed to one process at a
// time, as a QAT device section hands out DC instances. It lets the zlib
// shim run on a real QAT card (the QAT PMD) or on DPDK's software devices.
//
// Pinned buffers are ordinary memory here: the backend copies every
// operation's source into its own staging mbufs (which are the DMA-able
// memory, from rte_pktmbuf_pool_create on the device's socket) and the
// result back out, so the shim's buffers need not be IOVA-contiguous.
// That copy is the price of the Go-slice CompOp contract on DPDK.
type Service struct {
	insts []*instance
	procs map[hw.ProcessID]*serviceProc
	iova  uint64
	stats ServiceStats
}

// ServiceStats count what the service handed out.
type ServiceStats struct {
	Attaches       uint64 `json:"attaches"`
	AttachFailures uint64 `json:"attach_failures"`
	Detaches       uint64 `json:"detaches"`
	PinnedAllocs   uint64 `json:"pinned_allocs"`
	PinnedFrees    uint64 `json:"pinned_frees"`
	LeakedBuffers  uint64 `json:"leaked_buffers"`
	LeakedInsts    uint64 `json:"leaked_instances"`
}

type instance struct {
	dev   *CompressDev
	qp    int
	owner hw.ProcessID
	held  bool
}

type serviceProc struct {
	bufs map[uintptr]*hw.PinnedBuffer
}

// Device implements hw.CompressInstance.
func (i *instance) Device() hw.CompressDev { return i.dev }

// QueuePair implements hw.CompressInstance.
func (i *instance) QueuePair() int { return i.qp }

// NUMANode implements hw.CompressInstance.
func (i *instance) NUMANode() int { return i.dev.caps.NUMANode }

// Name implements hw.CompressInstance.
func (i *instance) Name() string { return fmt.Sprintf("%s/qp%d", i.dev.name, i.qp) }

// NewService makes a service of the queue pairs of devs.
func NewService(devs ...*CompressDev) *Service {
	s := &Service{procs: map[hw.ProcessID]*serviceProc{}}
	for _, d := range devs {
		for qp := range d.qps {
			s.insts = append(s.insts, &instance{dev: d, qp: qp})
		}
	}
	return s
}

// Stats returns the service's counters.
func (s *Service) Stats() ServiceStats { return s.stats }

func (s *Service) proc(pid hw.ProcessID) *serviceProc {
	p := s.procs[pid]
	if p == nil {
		p = &serviceProc{bufs: map[uintptr]*hw.PinnedBuffer{}}
		s.procs[pid] = p
	}
	return p
}

// Attach implements hw.CompressService: the first free queue pair, on
// node when one is there.
func (s *Service) Attach(pid hw.ProcessID, node int) (hw.CompressInstance, error) {
	var pick *instance
	for _, i := range s.insts {
		if i.held {
			continue
		}
		if pick == nil || (node >= 0 && i.NUMANode() == node && pick.NUMANode() != node) {
			pick = i
		}
	}
	if pick == nil {
		s.stats.AttachFailures++
		return nil, fmt.Errorf("dpdk: process %d: all %d queue pairs held: %w", pid, len(s.insts), hw.ErrNoInstance)
	}
	pick.held, pick.owner = true, pid
	s.proc(pid)
	s.stats.Attaches++
	return pick, nil
}

// Detach implements hw.CompressService.
func (s *Service) Detach(pid hw.ProcessID, ci hw.CompressInstance) error {
	i, ok := ci.(*instance)
	if !ok || !i.held || i.owner != pid {
		return fmt.Errorf("dpdk: process %d does not hold %v", pid, ci)
	}
	i.held = false
	s.stats.Detaches++
	return nil
}

// AllocPinned implements hw.CompressService (see the type's comment).
func (s *Service) AllocPinned(pid hw.ProcessID, size int, node int) (*hw.PinnedBuffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("dpdk: pinned buffer of %d bytes", size)
	}
	s.iova += uint64(size)
	b := &hw.PinnedBuffer{Bytes: make([]byte, size), Node: node, IOVA: s.iova, Owner: pid, Handle: uintptr(s.iova)}
	s.proc(pid).bufs[b.Handle] = b
	s.stats.PinnedAllocs++
	return b, nil
}

// FreePinned implements hw.CompressService.
func (s *Service) FreePinned(b *hw.PinnedBuffer) error {
	p := s.procs[b.Owner]
	if p == nil || p.bufs[b.Handle] != b {
		return fmt.Errorf("dpdk: pinned buffer %#x is not held by process %d", b.Handle, b.Owner)
	}
	delete(p.bufs, b.Handle)
	s.stats.PinnedFrees++
	return nil
}

// Exit implements hw.CompressService: what the process still holds is
// taken back and counted as leaked.
func (s *Service) Exit(pid hw.ProcessID) {
	for _, i := range s.insts {
		if i.held && i.owner == pid {
			i.held = false
			s.stats.LeakedInsts++
		}
	}
	if p := s.procs[pid]; p != nil {
		s.stats.LeakedBuffers += uint64(len(p.bufs))
		delete(s.procs, pid)
	}
}

var _ hw.CompressService = (*Service)(nil)

// OpenCompressService opens the compressdev name with cfg and returns a
// Service over its queue pairs: the zlib shim's accelerator on DPDK.
func (e *EAL) OpenCompressService(name string, cfg CompressConfig) (hw.CompressService, error) {
	d, err := e.OpenCompressDev(name, cfg)
	if err != nil {
		return nil, err
	}
	return NewService(d), nil
}
