package lstack_test

import (
	"bytes"
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// bulkThread answers its connection's first byte with one write of
// size bytes (the send ring holds them all), then sleeps.
type bulkThread struct {
	core  *sim.Core
	sock  *lstack.Socket
	size  int
	wrote bool
	buf   []byte
}

func (b *bulkThread) Poll(m hw.Meter) (bool, time.Duration) {
	if b.sock == nil || b.wrote {
		return false, sim.Never
	}
	n, err := b.sock.Read(m, b.buf)
	Expect(err).NotTo(HaveOccurred())
	if n == 0 {
		b.sock.Wait(m, b.core.Wake)
		return false, sim.Never
	}
	w, err := b.sock.Write(m, bytes.Repeat([]byte("b"), b.size))
	Expect(err).NotTo(HaveOccurred())
	Expect(w).To(Equal(b.size))
	b.wrote = true
	return true, sim.Never
}

// sink connects, sends one byte and counts what comes back.
type sink struct {
	in      *lstack.Instance
	c       *tcp.Conn
	got     int
	buf     []byte
	started bool
	asked   bool
}

func (s *sink) Poll(m hw.Meter) (bool, time.Duration) {
	if !s.started {
		s.started = true
		c, err := s.in.Connect(m, 0, tcp.AddrFrom4([4]byte{10, 0, 0, 1}, 3306))
		Expect(err).NotTo(HaveOccurred())
		s.c = c
		return true, sim.Never
	}
	if !s.c.Connected() {
		return false, sim.Never
	}
	if !s.asked {
		s.asked = true
		rest, err := s.in.WriteAvailable(m, s.c, []byte("?"))
		Expect(err).NotTo(HaveOccurred())
		Expect(rest).To(BeEmpty())
		return true, sim.Never
	}
	var err error
	s.buf, _, err = s.in.ReadAvailable(m, s.c, s.buf[:0])
	Expect(err).NotTo(HaveOccurred())
	s.got += len(s.buf)
	return len(s.buf) > 0, sim.Never
}

type bulkBed struct {
	stack, app *sim.Core
	sink       *sink
}

// newBulkBed runs a thread on its own core answering a client's byte
// with size bytes, on a server stack in mode.
func newBulkBed(mode lstack.Mode, size int) *bulkBed {
	eng := sim.NewEngine(6)
	sin, score, sport := modeNode(eng, 0, "server", "10.0.0.1/24", mode)
	cin, ccore, cport := modeNode(eng, 1, "client", "10.0.0.2/24", lstack.ModeLstack)
	_, err := nic.NewLink(eng, "wire", sport, cport, nic.LinkConfig{Latency: 10 * time.Microsecond})
	Expect(err).NotTo(HaveOccurred())
	app := sim.NewCore(eng, 7, 0, cost.For(costops.Table()).Default().Prices(2.6), false)
	th := &bulkThread{core: app, size: size, buf: make([]byte, 64)}
	app.Attach(th)
	b, err := lstack.NewBridge(sin, lstack.NewRouter(3), score.Wake)
	Expect(err).NotTo(HaveOccurred())
	Expect(b.Listen(3306, 16, func(_ int, s *lstack.Socket) {
		th.sock = s
		app.Wake(eng.Now())
	})).To(Succeed())
	simhost.BindBridge(eng, score, b)
	sk := &sink{in: cin}
	ccore.Attach(sk)
	eng.RunUntil(100 * time.Millisecond)
	// The thread's next call pays what the flushes of its write owe its
	// core (the flush ran in the stack core's turn).
	th.sock.Wait(app, app.Wake)
	return &bulkBed{stack: score, app: app, sink: sk}
}
