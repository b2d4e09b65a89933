package stackproc

import (
	"io"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
)

// A forked child writing on the connection its parent holds: the
// parent's writer sends the child's bytes first (flushSides). Found under
// preload/preloadtest's sharetrace: the writer counted and notified the
// child after letting the holders' list go, by which time the child's
// process could have exited and unmapped its memfd (SIGSEGV, or an index
// out of range on the zero-length mapping).
var _ = Describe("a shared connection whose other holder's process exits while the active writer sends its bytes", func() {
	It("sends them, and touches nothing of that process after it has gone", func() {
		pair, err := livetest.NewRingPair(1, 1)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(pair.Stop)

		var (
			child  *fakeClient
			armed  = make(chan struct{})
			exited = make(chan struct{})
			once   sync.Once
			srv    *Server
		)
		cfg := Config{Runtime: pair.A, Geometry: Geometry{Slots: 8, Ring: 4096, Recs: 16}}
		// Between taking the child's bytes and sending them, the child's
		// process goes: its slot freed, its memfd unmapped.
		cfg.sidesTaken = func() {
			once.Do(func() {
				select {
				case <-armed:
				case <-time.After(10 * time.Second):
					return
				}
				child.close()
				deadline := time.Now().Add(10 * time.Second)
				for time.Now().Before(deadline) {
					for _, p := range srv.Stats().Processes {
						if p.Exited && p.Inherited > 0 {
							close(exited)
							return
						}
					}
					time.Sleep(time.Millisecond)
				}
			})
		}
		srv, path := startServer(cfg)
		parent, err := dialFake(path)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(parent.close)
		cs, peer := parent.acceptOne(pair, 7400)

		// The parent forks; the child claims the connection at its slot.
		tok, errno, _, _ := parent.call(opFork, -1, 0, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		child, err = dialFakeToken(path, uint64(tok)<<1|1)
		Expect(err).NotTo(HaveOccurred())
		Expect(child.until(10*time.Second, func() bool { return child.slotU32(int(cs), sState) == stConnected })).To(BeTrue(), "the child holds the connection")

		Expect(child.until(10*time.Second, func() bool { return child.slotU32(int(cs), sTxWait) == 1 })).To(BeTrue(), "the child's side writer asleep")
		// The child writes without a doorbell (its side writer sleeps);
		// the parent writes and rings: its writer takes the child's bytes
		// first, and the hook ends the child's process.
		fromChild, fromParent := []byte("child's line\n"), []byte("parent's line\n")
		Expect(child.m.TxRing(int(cs)).Write(fromChild)).To(Equal(len(fromChild)))
		close(armed)
		Expect(parent.m.TxRing(int(cs)).Write(fromParent)).To(Equal(len(fromParent)))
		parent.doorbell()
		Eventually(exited).WithTimeout(15*time.Second).Should(BeClosed(), "the child's process exited in the window")

		want := append(append([]byte{}, fromChild...), fromParent...)
		got := make([]byte, len(want))
		Expect(peer.SetReadDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
		_, err = io.ReadFull(peer, got)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(got)).To(Equal(string(want)), "the child's bytes, then the parent's")
	})
})
