package gonet_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/gonet"
	"github.com/savanna-sim/savanna/stack/rt"
)

// idleConns opens n connections from A to B, has each do one 64-byte
// request and reply (one goroutine drives them all, so that no
// application goroutine is parked per connection: what is measured is
// the stack's), waits past the delayed ACKs and returns the heap in use
// (after a collection) per connection per side, and both sides' Conns.
func idleConns(w *wire, port uint16, n int) (perSide float64, clients, servers []*gonet.Conn, err error) {
	ln, err := gonet.ListenOptions(w.b, port, n, gonet.Options{})
	if err != nil {
		return 0, nil, nil, err
	}
	defer ln.Close()
	accepted := make(chan *gonet.Conn, n)
	go func() {
		for i := 0; i < n; i++ {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c.(*gonet.Conn)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	before := heapInUse()
	raddr := &net.TCPAddr{IP: net.IPv4(10, 9, 0, 2).To4(), Port: int(port)}
	req, buf := make([]byte, 64), make([]byte, 64)
	for i := 0; i < n; i++ {
		c, err := gonet.DialTCP(ctx, w.a, raddr)
		if err != nil {
			return 0, nil, nil, fmt.Errorf("dial %d: %w", i, err)
		}
		s, ok := <-accepted
		if !ok {
			return 0, nil, nil, fmt.Errorf("accept %d failed", i)
		}
		if _, err := c.Write(req); err != nil {
			return 0, nil, nil, err
		}
		if _, err := io.ReadFull(s, buf); err != nil {
			return 0, nil, nil, err
		}
		if _, err := s.Write(buf); err != nil {
			return 0, nil, nil, err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return 0, nil, nil, err
		}
		clients, servers = append(clients, c), append(servers, s)
	}
	// Past the delayed ACKs (40 ms at most) and their output, and past
	// two of the lcores' sweeps of idle rings (100 ms apart, an lcore
	// parked at most 100 ms between looks).
	time.Sleep(500 * time.Millisecond)
	after := heapInUse()
	return float64(int64(after)-int64(before)) / float64(2*n), clients, servers, nil
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

var _ = Describe("an idle connection's memory", func() {
	It("holds no ring storage and no write wake-up channel on either side once its bytes are read", func() {
		w, err := newWire(1, 1)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.stop)
		_, clients, servers, err := idleConns(w, 7410, 50)
		Expect(err).NotTo(HaveOccurred())
		for i, c := range append(clients, servers...) {
			Eventually(func() [2]bool {
				rx, tx := c.RingsHeld()
				return [2]bool{rx, tx}
			}).WithTimeout(5*time.Second).Should(Equal([2]bool{false, false}), "conn %d", i)
			// Whether a Read waited (and made its channel) depends on
			// whether the bytes were there first: not asserted.
			_, wr := c.WakeChannels()
			Expect(wr).To(BeFalse(), "conn %d: no Write ever waited", i)
			Expect(c.Close()).To(Succeed())
		}
		st := w.a.Lcores()[0].RingStorage().Stats()
		Expect(st.Puts).To(BeNumerically(">=", 100), "both rings of every client went back")
	})
})

// BenchmarkIdleConnMemory reports the heap an idle established gonet
// connection holds per side (bytes/conn) on a live stack, after one
// request and its reply: the TCP engine's connection, gonet's Conn with
// its pipe, the lcore's watch entry and the connection table, but no
// buffers (TCP's and the rings' go back to their stack's free lists
// when drained; those lists are shared, bounded at 1 MiB a size class,
// and counted here, spread over the connections).
func BenchmarkIdleConnMemory(b *testing.B) {
	const n = 4000
	var per, spare float64
	for i := 0; i < b.N; i++ {
		w, err := newWire(1, 1)
		if err != nil {
			b.Fatal(err)
		}
		var clients, servers []*gonet.Conn
		per, clients, servers, err = idleConns(w, 7411, n)
		if err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(clients)
		runtime.KeepAlive(servers)
		// The rings' free lists: shared, bounded, and part of the above.
		var sp int64
		for _, r := range [][]*rt.Lcore{w.a.Lcores(), w.b.Lcores()} {
			for _, lc := range r {
				sp += lc.RingStorage().Stats().SpareBytes
			}
		}
		spare = float64(sp) / float64(2*n)
		w.stop()
	}
	b.ReportMetric(per, "bytes/conn")
	b.ReportMetric(spare, "ring_spare_bytes/conn")
}
