package http_test

import (
	"bytes"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/apps/http"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// okResponse is what okServer answers to every request.
const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// okServer answers each request it reads (up to its blank line) with
// okResponse: just enough of a server to drive wrk.
type okServer struct {
	set  *lstack.EventSet
	ln   *tcp.Listener
	evs  []tcp.Event
	bufs map[*tcp.Conn][]byte
}

func (s *okServer) Poll(m hw.Meter) (bool, time.Duration) {
	in := s.set.Instance()
	s.evs = s.set.Events(s.evs[:0])
	for _, ev := range s.evs {
		if ev.Listener != nil {
			s.set.AcceptAll(m, s.ln, func(c *tcp.Conn) any { return nil })
			continue
		}
		if ev.Mask&tcp.EventReadable == 0 {
			continue
		}
		buf, _, err := in.ReadAvailable(m, ev.Conn, s.bufs[ev.Conn])
		Expect(err).NotTo(HaveOccurred())
		for {
			i := bytes.Index(buf, []byte("\r\n\r\n"))
			if i < 0 {
				break
			}
			buf = buf[i+4:]
			_, err := in.Write(m, ev.Conn, []byte(okResponse))
			Expect(err).NotTo(HaveOccurred())
		}
		s.bufs[ev.Conn] = buf
	}
	s.set.Wait(m, len(s.evs) > 0)
	return len(s.evs) > 0, sim.Never
}

func wrkHost(eng *sim.Engine, id uint16, name, addr string) *simhost.Host {
	h, err := simhost.NewHost(eng, simhost.HostConfig{
		NIC:     simhost.NICConfig{Name: name, ID: id, RxRing: 1024, TxRing: 1024, Mbufs: 8192},
		Address: addr, Mode: lstack.ModeLstack, TCP: tcp.DefaultConfig(),
	})
	Expect(err).NotTo(HaveOccurred())
	return h
}

var _ = Describe("wrk's own work", func() {
	It("charges each request it issues and each response it takes on the client's core", func() {
		eng := sim.NewEngine(1)
		srv := wrkHost(eng, 0, "server", "10.0.0.1/24")
		cli := wrkHost(eng, 1, "client", "10.0.0.2/24")
		_, err := nic.NewLink(eng, "wire", srv.Port, cli.Port, nic.LinkConfig{Latency: 10 * time.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		s := &okServer{set: srv.Instance.NewEventSet(), bufs: map[*tcp.Conn][]byte{}}
		s.ln, err = s.set.Listen(80, 16)
		Expect(err).NotTo(HaveOccurred())
		srv.Core.Attach(s)
		off := false
		w, err := http.NewWrk(http.WrkConfig{Connections: 2, Gzip: &off}, cli.Instance, tcp.AddrFrom4([4]byte{10, 0, 0, 1}, 80), nil)
		Expect(err).NotTo(HaveOccurred())
		cli.Core.Attach(w)
		eng.RunUntil(5 * time.Millisecond)
		done := int64(w.Stats(eng.Now()).Requests)
		Expect(done).To(BeNumerically(">", 10))
		ops := cli.Core.Stats().Ops
		Expect(ops[http.CostWrkResponse]).To(Equal(done))
		Expect(ops[appcost.ParseByte]).To(Equal(done * int64(len(okResponse))))
		// Each connection has at most one request unanswered.
		Expect(ops[http.CostWrkRequest]).To(BeNumerically(">=", done))
		Expect(ops[http.CostWrkRequest]).To(BeNumerically("<=", done+2))
		// Per request: two epoll_ctl, a write and a read.
		Expect(ops[lstack.CostSocketCall] + ops[lstack.CostEpollCtl]).To(BeNumerically(">=", 4*done))
	})
})
