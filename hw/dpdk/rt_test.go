//go:build dpdk

package dpdk_test

import (
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
	"github.com/savanna-sim/savanna/stack/gonet"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// The real-time driver (stack/rt) on a net_memif pair, its lcores
// registered with the EAL through rt.Config.ThreadHook: what
// "simrun serve --backend dpdk" runs.
var _ = Describe("stack/rt on DPDK ports with EAL lcores", Label("dpdk"), Ordered, func() {
	var (
		srv, cli     *rt.Runtime
		spool, cpool *dpdk.Mempool
	)

	// runtime opens port name with a cached pool on its socket and runs
	// the driver on it, one lcore registered with the EAL.
	runtime := func(name, addr string, seed uint64) (*rt.Runtime, *dpdk.Mempool) {
		dev, err := eal.OpenPort(name)
		Expect(err).NotTo(HaveOccurred())
		mp, err := eal.NewMempool(dpdk.MempoolConfig{Name: name + "_rt", Size: 8192, Cache: 256,
			DataRoom: 2048 + hw.DefaultHeadroom, Socket: dev.Socket()})
		Expect(err).NotTo(HaveOccurred())
		tc := tcp.DefaultConfig()
		tc.SendBuffer, tc.RecvBuffer = 512<<10, 512<<10
		// memif cannot wake a parked lcore, so parks are short.
		r, err := rt.New(rt.Config{ThreadHook: eal.ThreadHook, MaxPark: 200 * time.Microsecond, Seed: seed},
			lstack.Config{Iface: iface.Config{Address: addr}, TCP: tc}, dev, mp)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Start()).To(Succeed())
		return r, mp
	}

	BeforeAll(func() {
		// The memif server port starts before the client.
		srv, spool = runtime("net_memif2", "10.9.1.1/24", 1)
		cli, cpool = runtime("net_memif3", "10.9.1.2/24", 2)
		DeferCleanup(func() {
			cli.Stop()
			// The client's stop sends memif's disconnect, which the
			// server port handles on the EAL's interrupt thread; stopping
			// the server before that is done has both tear the same
			// server state down at once. Once a clean-clone CI run died
			// here with SIGSEGV on a thread that was not Go's, so wait
			// for the server to see the disconnect first.
			Eventually(func() bool { return srv.Dev().Link().Up }).
				WithTimeout(10 * time.Second).WithPolling(time.Millisecond).Should(BeFalse())
			srv.Stop()
		})
		Eventually(func() bool { return srv.Dev().Link().Up && cli.Dev().Link().Up }).
			WithTimeout(10 * time.Second).WithPolling(10 * time.Millisecond).Should(BeTrue())
	})

	// lcoreID asks lcore lc for rte_lcore_id() on its own thread.
	lcoreID := func(lc *rt.Lcore) int {
		got := make(chan int, 1)
		Expect(lc.Submit(func(*rt.Lcore) { got <- eal.LcoreID() })).To(Succeed())
		var id int
		Eventually(got).WithTimeout(5 * time.Second).Should(Receive(&id))
		return id
	}

	It("runs each lcore on an EAL thread: rte_lcore_id is a valid, distinct lcore there", func() {
		a, b := lcoreID(srv.Lcores()[0]), lcoreID(cli.Lcores()[0])
		for _, id := range []int{a, b} {
			Expect(id).NotTo(Equal(dpdk.LcoreIDAny))
			// -l 0 makes lcore 0 the main lcore; registered threads get
			// the free ids above it (RTE_MAX_LCORE is 128 in Debian's build).
			Expect(id).To(BeNumerically(">", 0))
			Expect(id).To(BeNumerically("<", 128))
		}
		Expect(a).NotTo(Equal(b))
		// The test's own goroutine is not an EAL thread.
		Expect(eal.LcoreID()).To(Equal(dpdk.LcoreIDAny))
	})

	It("carries 64 MiB of TCP between two stacks on rt lcores, intact, through the Go socket API", func() {
		ln, err := gonet.Listen(srv, 5001)
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		const total = 64 << 20
		recvSum := make(chan []byte, 1)
		go func() {
			defer GinkgoRecover()
			c, err := ln.Accept()
			Expect(err).NotTo(HaveOccurred())
			defer c.Close()
			h := sha256.New()
			n, err := io.Copy(h, c)
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(BeEquivalentTo(total))
			recvSum <- h.Sum(nil)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := gonet.Dial(ctx, cli, "10.9.1.1:5001")
		Expect(err).NotTo(HaveOccurred())
		start := time.Now()
		r := rand.New(rand.NewPCG(3, 4))
		buf := make([]byte, 64<<10)
		sent := sha256.New()
		for n := 0; n < total; n += len(buf) {
			for i := 0; i < len(buf); i += 8 {
				v := r.Uint64()
				for j := 0; j < 8; j++ {
					buf[i+j] = byte(v >> (8 * j))
				}
			}
			sent.Write(buf)
			_, err := c.Write(buf)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(c.CloseWrite()).To(Succeed())
		var got []byte
		Eventually(recvSum).WithTimeout(2 * time.Minute).Should(Receive(&got))
		el := time.Since(start)
		Expect(got).To(Equal(sent.Sum(nil)))
		Expect(c.Close()).To(Succeed())
		snap := cli.Snapshot()
		GinkgoWriter.Printf("64 MiB over net_memif on rt lcores in %v (%.0f MB/s); client tcp %+v\n",
			el, float64(total)/el.Seconds()/1e6, snap.Lcores[0].TCP)
		AddReportEntry("64 MiB over net_memif, stack/rt lcores", el.String())
	})

	It("serves the lcores from the mempools' per-lcore caches", func() {
		// After traffic, freed mbufs sit in the caches of the lcores that
		// freed them; a pool used only by unregistered threads has none.
		Expect(spool.DriverStats().Cached + cpool.DriverStats().Cached).To(BeNumerically(">", 0))
	})
})
