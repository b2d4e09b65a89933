package gonet_test

import (
	"context"
	"net"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/gonet"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// pipeWith is pipe with the listener's options.
func pipeWith(w *wire, port uint16, o gonet.Options) (client, server *gonet.Conn) {
	ln, err := gonet.ListenOptions(w.b, port, 16, o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(ln.Close)
	ch := make(chan net.Conn, 1)
	go func() {
		defer GinkgoRecover()
		c, err := ln.Accept()
		Expect(err).NotTo(HaveOccurred())
		ch <- c
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err = gonet.Dial(ctx, w.a, "10.9.0.2:"+strconv.Itoa(int(port)))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(client.Close)
	var s net.Conn
	Eventually(ch).WithTimeout(10 * time.Second).Should(Receive(&s))
	DeferCleanup(s.Close)
	return client, s.(*gonet.Conn)
}

// established returns the rows of a survey in ESTABLISHED.
func established(s rt.Survey) []rt.SocketRow {
	var out []rt.SocketRow
	for _, r := range s.Sockets {
		if r.State == tcp.StateEstablished {
			out = append(out, r)
		}
	}
	return out
}

var _ = Describe("watching sockets of a running stack", func() {
	var w *wire
	BeforeEach(func() {
		var err error
		w, err = newWire(1, 2)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.stop)
	})

	It("lists the listener on every lcore and each connection with its tuple, state, queues and ring bytes", func() {
		client, server := pipeWith(w, 90, gonet.Options{})
		msg := make([]byte, 1000)
		_, err := client.Write(msg)
		Expect(err).NotTo(HaveOccurred())
		// The server does not read: the bytes wait in its receive ring.
		Eventually(func() []rt.SocketRow { return established(w.b.Survey(true)) }).WithTimeout(10 * time.Second).
			Should(ContainElement(And(
				HaveField("Lcore", server.Lcore()),
				HaveField("SocketInfo.Local", tcp.AddrFrom4([4]byte{10, 9, 0, 2}, 90)),
				HaveField("SocketInfo.Remote.IP", tcp.IPFrom4([4]byte{10, 9, 0, 1})),
				HaveField("RxRing", 1000),
			)))
		s := w.b.Survey(true)
		var listeners []rt.SocketRow
		for _, r := range s.Sockets {
			if r.State == tcp.StateListen {
				listeners = append(listeners, r)
			}
		}
		Expect(listeners).To(HaveLen(2), "one per lcore")
		for _, l := range listeners {
			Expect(l.Local.Port).To(BeEquivalentTo(90))
			Expect(l.SendQueue).To(Equal(16), "a listener's Send-Q is its backlog, as in ss")
			Expect(l.RxRing).To(BeZero())
		}
		// The states agree with the listing, lcore by lcore.
		for i := range s.Lcores {
			n := 0
			for _, r := range s.Sockets {
				if r.Lcore == i && r.State == tcp.StateEstablished {
					n++
				}
			}
			Expect(s.States[i][tcp.StateEstablished]).To(Equal(n))
			Expect(s.States[i][tcp.StateListen]).To(Equal(1))
		}
		// The client side has had its data acknowledged: an RTT sample
		// and a congestion window.
		Eventually(func() []rt.SocketRow { return established(w.a.Survey(true)) }).WithTimeout(10 * time.Second).
			Should(ContainElement(And(
				HaveField("SocketInfo.SRTT", BeNumerically(">", 0)),
				HaveField("SocketInfo.Cwnd", BeNumerically(">", 0)),
				HaveField("SocketInfo.SendQueue", 0),
				HaveField("SocketInfo.Remote", tcp.AddrFrom4([4]byte{10, 9, 0, 2}, 90)),
			)))
		Expect(w.a.Survey(false).Sockets).To(BeNil(), "no listing unless asked")
	})

	It("records read latency from the bytes entering the receive ring to the Read that takes them", func() {
		lat := gonet.NewReadLatency(2)
		client, server := pipeWith(w, 91, gonet.Options{Latency: lat})
		_, err := client.Write([]byte("hello"))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int { rx, _ := server.RingBytes(); return rx }).WithTimeout(10 * time.Second).Should(Equal(5))
		Expect(lat.Histogram().TotalCount()).To(BeZero(), "nothing read yet")
		// A lower bound only: the bytes waited at least this long.
		const wait = 20 * time.Millisecond
		time.Sleep(wait)
		buf := make([]byte, 16)
		n, err := server.Read(buf)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(5))
		h := lat.Histogram()
		Expect(h.TotalCount()).To(BeEquivalentTo(1))
		Expect(h.Min()).To(BeNumerically(">=", int64(wait)*999/1000))
	})
})
