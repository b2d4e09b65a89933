package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Many connections driven by readiness events", func() {
	It("transfers on 300 connections under loss, closes them all and leaves no state behind", func() {
		const n = 300
		const size = 128 << 10
		cfg := tuned(func(c *Config) {
			c.MinRTO = 20 * time.Millisecond
			c.MSL = 200 * time.Millisecond
			c.SendBuffer = 64 << 10
			c.RecvBuffer = 64 << 10
			c.SynBacklog = 64
		})
		w := newWire(wireConfig{rateBps: 10e9, latency: 50 * time.Microsecond, loss: 0.01, reorder: 0.01,
			reorderBy: 100 * time.Microsecond, seed: 31}, [2]Config{cfg, cfg})
		l, err := w.stacks[1].Listen(IP{}, 80, n)
		Expect(err).NotTo(HaveOccurred())
		type clientSide struct {
			st *streamer
		}
		type serverSide struct {
			d      *drainer
			closed bool
		}
		clients := map[*Conn]*clientSide{}
		order := []*Conn{}
		for i := 0; i < n; i++ {
			c, err := w.stacks[0].Connect(0, Addr{w.addrs[0], 0}, Addr{w.addrs[1], 80})
			Expect(err).NotTo(HaveOccurred())
			clients[c] = &clientSide{st: newStreamer(size, uint64(i))}
			order = append(order, c)
		}
		servers := map[*Conn]*serverSide{}
		done := 0
		var evs []Event
		for {
			evs = w.stacks[0].Events(evs[:0])
			for _, e := range evs {
				if cs := clients[e.Conn]; cs != nil && e.Mask&EventWritable != 0 {
					cs.st.pump(e.Conn)
				}
				if e.Mask&EventReadable != 0 {
					_, _ = e.Conn.Read(make([]byte, 16))
				}
			}
			evs = w.stacks[1].Events(evs[:0])
			for _, e := range evs {
				if e.Listener != nil {
					for {
						c, ok := l.Accept()
						if !ok {
							break
						}
						servers[c] = &serverSide{d: newDrainer()}
						c.SetEventHook(nil)
						if c.Readable() {
							servers[c].d.pump(c)
						}
					}
					continue
				}
				ss := servers[e.Conn]
				if ss == nil || e.Mask&EventReadable == 0 {
					continue
				}
				ss.d.pump(e.Conn)
				if ss.d.eof && !ss.closed {
					ss.closed = true
					done++
					Expect(e.Conn.Close()).To(Succeed())
				}
			}
			if done == n && w.stacks[0].NumConns() == 0 && w.stacks[1].NumConns() == 0 {
				break
			}
			Expect(w.step(30*time.Second)).To(BeTrue(), "stalled with %d of %d done, conns %d/%d",
				done, n, w.stacks[0].NumConns(), w.stacks[1].NumConns())
		}
		// Every stream arrived intact: match by content hash.
		want := map[string]bool{}
		for _, c := range order {
			want[string(clients[c].st.h.Sum(nil))] = true
		}
		for _, ss := range servers {
			Expect(ss.d.n).To(BeEquivalentTo(size))
			sum := ss.d.h.Sum(nil)
			Expect(want).To(HaveKey(string(sum)))
			delete(want, string(sum))
		}
		Expect(want).To(BeEmpty())
		for i := 0; i < 2; i++ {
			st := w.stacks[i].Stats()
			Expect(st.CurrEstab).To(BeZero())
			Expect(len(w.stacks[i].timers)).To(BeZero())
		}
		Expect(w.stacks[0].Stats().ActiveOpens).To(BeEquivalentTo(n))
		Expect(w.stacks[1].Stats().PassiveOpens).To(BeEquivalentTo(n))
		Expect(w.stacks[0].Stats().TimewaitConns).To(BeEquivalentTo(n))
		st := w.stacks[1].Stats()
		GinkgoWriter.Printf("server: cookies sent %d valid %d failed %d, listen drops %d, retrans %d/%d\n",
			st.SynCookiesSent, st.SynCookiesValid, st.SynCookiesFailed, st.ListenDrops,
			w.stacks[0].Stats().RetransSegs, st.RetransSegs)
	})
})
