package calibrate

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Keys of the stack benchmark's Extra: per packet, the units of each
// cost operation the stack charged (by the op's name), and these.
const (
	extraIdlePolls = "lstack.idle_polls"
	extraRxBursts  = "lstack.rx_bursts"
	extraTxBursts  = "lstack.tx_bursts"
)

// stackPerPacket is Savanna's own stack in real time: two lstack
// instances joined by a hw/ringdev pair (the in-memory link
// internal/livetest.RingPair and bench use), polled in turn by one
// locked thread as one lcore serving two ports (hw/dpdk's TCP spec
// does the same), with an application on each doing 64-byte
// request/response over one TCP connection through the instances'
// socket calls. The figure is the thread's CPU time divided by the
// packets both ports sent (each packet is sent by one instance and
// received by the other, so a packet's figure is its transmit and its
// receive). A hw.CountingMeter counts what the stack charged, so the
// mapping can set the figure against the model's own account of the
// same work.
func stackPerPacket() Bench {
	return Bench{Name: "stack_pingpong", Unit: "ns/packet",
		What: "two Savanna stacks (lstack) over a hw/ringdev pair polled by one thread, 64-byte TCP request/response, thread CPU time per packet sent",
		Run: func(scale float64) (Sample, error) {
			p, err := newStackPair()
			if err != nil {
				return Sample{}, err
			}
			return onMeasureCPU(func() (Sample, error) { return p.run(budgetFor(scale)) })
		}}
}

// stackPair is the benchmark's two instances and their connection.
type stackPair struct {
	a, b     *lstack.Instance
	m        hw.CountingMeter
	start    time.Time
	cli, srv *tcp.Conn
}

func newStackPair() (*stackPair, error) {
	pa, pb, err := ringdev.NewPair(ringdev.Config{Name: "calib-a"}, ringdev.Config{Name: "calib-b"})
	if err != nil {
		return nil, err
	}
	mk := func(p *ringdev.Port, addr string, seed uint64) (*lstack.Instance, error) {
		pool, err := ringdev.NewMempool(p.Name()+".pool", 4096, 2048+hw.DefaultHeadroom)
		if err != nil {
			return nil, err
		}
		if err := p.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1}); err != nil {
			return nil, err
		}
		if err := p.SetupRxQueue(0, 1024, pool); err != nil {
			return nil, err
		}
		if err := p.SetupTxQueue(0, 1024); err != nil {
			return nil, err
		}
		if err := p.Start(); err != nil {
			return nil, err
		}
		in, err := lstack.New(lstack.Config{Iface: iface.Config{Address: addr}, TCP: tcp.DefaultConfig()},
			p, 0, pool, rand.New(rand.NewPCG(seed, 1)))
		if err != nil {
			return nil, fmt.Errorf("stack %s: %w", addr, err)
		}
		in.Start(0)
		return in, nil
	}
	s := &stackPair{start: time.Now()}
	if s.a, err = mk(pa, "10.9.0.1/24", 1); err != nil {
		return nil, err
	}
	if s.b, err = mk(pb, "10.9.0.2/24", 2); err != nil {
		return nil, err
	}
	return s, nil
}

// poll runs one turn of each instance.
func (s *stackPair) poll() {
	s.m.Clock = time.Since(s.start)
	s.a.Poll(&s.m)
	s.b.Poll(&s.m)
}

// connect opens the connection, within a wall-time bound.
func (s *stackPair) connect() error {
	ln, err := s.b.Listen(7, 4)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	s.cli, err = s.a.Connect(&s.m, 0, tcp.AddrFrom4([4]byte{10, 9, 0, 2}, 7))
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.srv == nil || !s.cli.Connected() {
		if time.Now().After(deadline) {
			return fmt.Errorf("the connection between the two stacks did not open within 5 s")
		}
		s.poll()
		if s.srv == nil {
			s.srv, _ = s.b.Accept(&s.m, ln)
		}
	}
	return nil
}

// exchange moves one 64-byte message from the writer's connection to
// the reader's.
func (s *stackPair) exchange(w, r *lstack.Instance, wc, rc *tcp.Conn, buf []byte, deadline time.Time) error {
	if n, err := w.Write(&s.m, wc, buf); err != nil || n != len(buf) {
		return fmt.Errorf("stack write: %d bytes, %v", n, err)
	}
	for got := 0; got < len(buf); {
		s.poll()
		n, err := r.Read(&s.m, rc, buf[got:])
		if err != nil {
			return fmt.Errorf("stack read: %w", err)
		}
		got += n
		if n == 0 && time.Now().After(deadline) {
			return fmt.Errorf("a message did not cross between the stacks in time")
		}
	}
	return nil
}

// warmRounds are the round trips before the timed batches: the
// connection's window opens and every buffer the exchange uses is
// allocated and cached.
const warmRounds = 2000

// run does timed batches of round trips after a warm-up, on the calling
// thread (pinned by the caller). The figure is the median batch's thread
// CPU time per packet sent; the operation counts are over every batch.
func (s *stackPair) run(bud budget) (Sample, error) {
	if err := s.connect(); err != nil {
		return Sample{}, err
	}
	buf := make([]byte, rrMessage)
	deadline := time.Now().Add(60 * time.Second)
	round := func() error {
		if err := s.exchange(s.a, s.b, s.cli, s.srv, buf, deadline); err != nil {
			return err
		}
		return s.exchange(s.b, s.a, s.srv, s.cli, buf, deadline)
	}
	for range warmRounds {
		if err := round(); err != nil {
			return Sample{}, err
		}
	}
	sent := func() uint64 { return s.a.Stats().TxPackets + s.b.Stats().TxPackets }
	s.m.Counts = [hw.NumCostOps]int64{}
	sa0, sb0 := s.a.Stats(), s.b.Stats()
	v, _, err := timeBatches(bud, threadClock, func(n int) (float64, error) {
		p0 := sent()
		for range n {
			if err := round(); err != nil {
				return 0, err
			}
		}
		return float64(sent() - p0), nil
	})
	if err != nil {
		return Sample{}, err
	}
	sa1, sb1 := s.a.Stats(), s.b.Stats()
	packets := float64((sa1.TxPackets - sa0.TxPackets) + (sb1.TxPackets - sb0.TxPackets))
	if packets == 0 {
		return Sample{}, fmt.Errorf("the stacks sent no packets")
	}
	extra := map[string]float64{
		extraIdlePolls: float64((sa1.IdlePolls-sa0.IdlePolls)+(sb1.IdlePolls-sb0.IdlePolls)) / packets,
		extraRxBursts:  float64((sa1.RxBursts-sa0.RxBursts)+(sb1.RxBursts-sb0.RxBursts)) / packets,
		extraTxBursts:  float64((sa1.TxBursts-sa0.TxBursts)+(sb1.TxBursts-sb0.TxBursts)) / packets,
	}
	table := opTable()
	for op := hw.CostOp(0); int(op) < hw.NumCostOps; op++ {
		if c := s.m.Counts[op]; c != 0 {
			if name := opName(table, op); name != "" {
				extra[name] = float64(c) / packets
			}
		}
	}
	return Sample{Value: v, Extra: extra}, nil
}
