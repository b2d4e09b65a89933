package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// memRig is a client stack (0) and a server stack (1) on a wire, n
// connections between them, and the applications on both sides, each of
// which reads or writes as its spec says.
type memRig struct {
	w       *wire
	l       *Listener
	clients []*Conn
	servers []*Conn
	chunk   []byte
	rbuf    []byte
}

func newMemRig(n int, client, server Config) *memRig {
	m := &memRig{
		w:     newWire(wireConfig{rateBps: 10e9, latency: 50 * time.Microsecond, seed: 17}, [2]Config{client, server}),
		chunk: make([]byte, 64<<10),
		rbuf:  make([]byte, 64<<10),
	}
	var err error
	m.l, err = m.w.stacks[1].Listen(IP{}, 80, n)
	Expect(err).NotTo(HaveOccurred())
	for i := 0; i < n; i++ {
		c, err := m.w.stacks[0].Connect(0, Addr{m.w.addrs[0], 0}, Addr{m.w.addrs[1], 80})
		Expect(err).NotTo(HaveOccurred())
		m.clients = append(m.clients, c)
	}
	for len(m.servers) < n {
		Expect(m.w.step(10 * time.Second)).To(BeTrue())
		for {
			c, ok := m.l.Accept()
			if !ok {
				break
			}
			m.servers = append(m.servers, c)
		}
	}
	return m
}

// peerOf returns the server's end of the client connection c.
func (m *memRig) peerOf(c *Conn) []*Conn {
	for _, sc := range m.servers {
		if sc.RemoteAddr() == c.LocalAddr() {
			return []*Conn{sc}
		}
	}
	Fail("no server end for " + c.LocalAddr().String())
	return nil
}

// fill writes as much as each connection takes.
func (m *memRig) fill(conns []*Conn) {
	for _, c := range conns {
		for {
			n, err := c.Write(m.chunk)
			if err != nil || n == 0 {
				break
			}
		}
	}
}

// drain reads what each connection holds and returns the bytes read.
func (m *memRig) drain(conns []*Conn) int {
	total := 0
	for _, c := range conns {
		for {
			n, err := c.Read(m.rbuf)
			total += n
			if err != nil || n == 0 {
				break
			}
		}
	}
	return total
}

// run advances virtual time by d, the applications (every) acting at
// the start and after every step.
func (m *memRig) run(d time.Duration, every func()) {
	end := m.w.now + d
	for {
		every()
		// Send what the applications' calls queued before step looks
		// for the next delivery, so that it sees it.
		for _, s := range m.w.stacks {
			s.Poll(m.w.now)
		}
		if !m.w.step(end) {
			break
		}
	}
	m.w.now = end
}

var _ = Describe("A memory budget for TCP buffers in tcp_mem's shape (issue 17, finding 1)", func() {
	// The budget under test: small, so that a few dozen connections
	// pass it. Each connection may hold a MiB each way.
	const (
		n    = 64
		low  = 2 << 20
		pres = 3 << 20
		high = 4 << 20
	)
	budgeted := func(lim MemLimits) Config {
		return tuned(func(c *Config) {
			c.SendBuffer, c.RecvBuffer = 1<<20, 1<<20
			c.Mem = lim
		})
	}
	client := tuned(func(c *Config) { c.SendBuffer, c.RecvBuffer = 1<<20, 1<<20 })
	// slack is the documented bound beyond high (docs/tcp.md, "Memory
	// pressure"): the window every connection may offer while the budget
	// is normal, and the first buffer of each direction.
	slack := int64(n) * (memNormalWindow + 2*ringInitial)

	It("holds what peers that send to applications that never read make it hold within high plus the slack, and drops nothing an honest peer sent", func() {
		m := newMemRig(n, client, budgeted(MemLimits{low, pres, high}))
		srv := m.w.stacks[1]
		m.run(2*time.Second, func() { m.fill(m.clients) })
		st := srv.Stats()
		b := srv.MemBudget().Stats()
		GinkgoWriter.Printf("server: peak %d, in use %d, promised %d, pressure entries %d, rcv_mem_drop %d\n",
			b.Peak, b.InUse, b.Promised, b.PressureEntries, st.Drops.RcvMemDrop)
		Expect(b.Peak).To(BeNumerically("<=", high+slack))
		Expect(b.InUse).To(BeNumerically(">", pres), "the hogs did take the budget into pressure")
		Expect(b.PressureEntries).To(BeNumerically(">=", 1))
		Expect(st.MemPressureEntries).To(Equal(b.PressureEntries))
		Expect(st.MemPeak).To(Equal(b.Peak))
		Expect(st.Drops.RcvMemDrop).To(BeZero(), "an honest peer keeps to the window it was offered")
		Expect(st.Drops.RecvBufferFull).To(BeZero())

		By("a connection whose application starts reading gets its throughput back")
		reader := m.servers[:1]
		read := 0
		m.run(time.Second, func() {
			m.fill(m.clients)
			read += m.drain(reader)
		})
		GinkgoWriter.Printf("reader: %d bytes in 1 s\n", read)
		Expect(read).To(BeNumerically(">", 32<<20))
		Expect(srv.MemBudget().Stats().Peak).To(BeNumerically("<=", high+slack))

		By("and everything goes back to the budget when the connections end")
		for _, c := range m.servers {
			c.Abort()
		}
		m.run(time.Second, func() {})
		Expect(srv.MemBudget().Stats().InUse).To(BeZero())
		Expect(srv.MemBudget().Stats().Promised).To(BeZero())
		Expect(srv.Stats().MemInUse).To(BeZero())
	})

	It("keeps an honest connection going under pressure: its window is what it holds plus four segments", func() {
		// High far away: the hogs take the budget into pressure and keep
		// it there while the honest connection runs.
		m := newMemRig(n, client, budgeted(MemLimits{low, pres, 1 << 30}))
		srv := m.w.stacks[1]
		hogs, honest := m.clients[1:], m.peerOf(m.clients[0])
		m.run(500*time.Millisecond, func() { m.fill(hogs) })
		Expect(srv.MemBudget().Stats().UnderPressure).To(BeTrue())

		const size = 4 << 20
		sent, read := 0, 0
		m.run(2*time.Second, func() {
			m.fill(hogs)
			for sent < size {
				k, err := m.clients[0].Write(m.chunk[:minInt(len(m.chunk), size-sent)])
				sent += k
				if err != nil || k == 0 {
					break
				}
			}
			read += m.drain(honest)
		})
		Expect(srv.MemBudget().Stats().UnderPressure).To(BeTrue())
		Expect(read).To(Equal(size), "the honest connection made progress under pressure")
		Expect(srv.Stats().Drops.RcvMemDrop).To(BeZero())
	})

	It("keeps the send buffers of applications that write to peers that never read within high, with short writes counted", func() {
		m := newMemRig(n, client, budgeted(MemLimits{low, pres, high}))
		srv := m.w.stacks[1]
		m.run(2*time.Second, func() { m.fill(m.servers) })
		st := srv.Stats()
		b := srv.MemBudget().Stats()
		GinkgoWriter.Printf("server: peak %d, in use %d, snd_mem_refused %d\n", b.Peak, b.InUse, st.SndMemRefused)
		Expect(b.Peak).To(BeNumerically("<=", high+memPressureSndBuf))
		Expect(st.SndMemRefused).To(BeNumerically(">", 0))
		// The clients did get a buffer's worth each: the budget cut the
		// server's buffers, not the clients' windows.
		Expect(m.w.stacks[0].Stats().MemInUse).To(BeNumerically(">", int64(n)<<20/2))
	})

	It("refuses tcp_mem that is not low <= pressure <= high at its key", func() {
		for _, lim := range []MemLimits{{2, 1, 3}, {1, 3, 2}, {-1, 1, 2}, {0, 0, 0}} {
			err := tuned(func(c *Config) { c.Mem = lim }).Validate()
			Expect(err).To(HaveOccurred(), "%v", lim)
			Expect(err.(*ConfigError).Key).To(Equal("tcp_mem"))
		}
	})

	It("is shared by the stacks of a process and safe for their lcores", func() {
		b := NewMemBudget(MemLimits{10, 20, 30})
		a1, a2 := newHarness(DefaultConfig()), newHarness(DefaultConfig())
		a1.s.SetMemBudget(b)
		a2.s.SetMemBudget(b)
		c1, c2 := a1.established(defaultPeer()), a2.established(defaultPeer())
		_, _ = c1.Write([]byte("x"))
		_, _ = c2.Write([]byte("y"))
		Expect(b.Stats().InUse).To(BeEquivalentTo(2 * ringInitial))
		Expect(a1.s.Stats().MemInUse + a2.s.Stats().MemInUse).To(BeEquivalentTo(b.Stats().InUse))
	})
})
