package stackproc

import (
	"io"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
)

// nginx answering "Connection: close" writes its response and closes at
// once. Found under wrk through an nginx reload: 1 response in ~26,000
// lost, the peer seeing a FIN with no data, because the writer had found
// the send ring empty and then saw the close.
var _ = Describe("a connection's last write before close", func() {
	It("is sent before the FIN even when the write and the close land between the writer's look at its ring and its look at closing", func() {
		pair, err := livetest.NewRingPair(1, 1)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(pair.Stop)

		var (
			f      *fakeClient
			armed  = make(chan struct{})
			landed = make(chan struct{})
			once   sync.Once
		)
		reply := []byte("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello")
		cfg := Config{Runtime: pair.A, Geometry: Geometry{Slots: 8, Ring: 4096, Recs: 16}}
		// The accepted connection's writer starts with an empty ring: its
		// first turn waits here until the accept is answered, then the
		// app writes (without a doorbell: the writer was not waiting, so
		// the library rings none) and closes.
		cfg.writerIdle = func(slot int) {
			once.Do(func() {
				select {
				case <-armed:
				case <-time.After(10 * time.Second):
					return
				}
				if n := f.m.TxRing(slot).Write(reply); n != len(reply) {
					return
				}
				if _, errno, _, _ := f.call(opClose, slot, 0, [4]byte{}, 0); errno != 0 {
					return
				}
				close(landed)
			})
		}
		_, path := startServer(cfg)
		f, err = dialFake(path)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(f.close)
		_, c := f.acceptOne(pair, 7300)
		close(armed)
		Eventually(landed).WithTimeout(10*time.Second).Should(BeClosed(), "the write and the close landed")

		Expect(c.SetReadDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
		got, err := io.ReadAll(c)
		Expect(err).NotTo(HaveOccurred(), "EOF, not a reset or the deadline")
		Expect(string(got)).To(Equal(string(reply)), "the whole reply, then the FIN")
	})
})
