package shmlink_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/hw/shmlink"
)

// echoEnv names the region the test binary, run again, attaches to and
// echoes every frame back on.
const echoEnv = "SHMLINK_ECHO_PEER"

// echoLimit bounds the echo process's life.
const echoLimit = 120 * time.Second

// echoPeer is the other process of the two-process specs: it attaches
// to path and sends back every frame it receives, until a frame of
// EtherType 0x88b6 comes, its creator goes, or echoLimit passes.
func echoPeer(path string) int {
	p, err := shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleAttach, Wait: 10 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer p.Close()
	pool, err := ringdev.NewMempool("echo", 4096, 2048+hw.DefaultHeadroom)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := p.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_ = p.SetupRxQueue(0, 1024, pool)
	_ = p.SetupTxQueue(0, 1024)
	if err := p.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("attached")
	rx := make([]*hw.Mbuf, 32)
	end := time.Now().Add(echoLimit)
	for idle := 0; time.Now().Before(end); {
		n := p.RxBurst(0, rx)
		if n == 0 {
			idle++
			if idle%1024 == 0 && !p.Link().Up {
				return 0
			}
			runtime.Gosched()
			continue
		}
		idle = 0
		for _, m := range rx[:n] {
			if binary.BigEndian.Uint16(m.Data()[12:14]) == 0x88b6 {
				m.Free()
				return 0
			}
		}
		for sent := 0; sent < n; {
			sent += p.TxBurst(0, rx[sent:n])
			if sent < n {
				runtime.Gosched()
			}
		}
	}
	return 3
}

// startEcho runs the test binary again as the echo peer of path.
func startEcho(path string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestShmlink$")
	cmd.Env = append(os.Environ(), echoEnv+"="+path)
	cmd.Stderr = GinkgoWriter
	out, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line := make([]byte, 9)
	_, err = out.Read(line)
	Expect(err).NotTo(HaveOccurred())
	Expect(string(line)).To(Equal("attached\n"))
	return cmd
}

// fill writes frame i of size bytes: a header and a payload that
// depends on i, so that a frame lost, repeated, reordered or corrupted
// shows.
func fill(b []byte, i uint32) {
	copy(b[0:6], []byte{2, 0x53, 0x4d, 0, 0, 2})
	copy(b[6:12], []byte{2, 0x53, 0x4d, 0, 0, 1})
	binary.BigEndian.PutUint16(b[12:14], 0x88b5)
	binary.BigEndian.PutUint32(b[14:18], i)
	x := i*2654435761 + 1
	for j := 18; j < len(b); j++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[j] = byte(x)
	}
}

var _ = Describe("a link between two processes", Label("slow"), func() {
	It("carries 256 MiB each way intact and in order: to an echoing process and back", func() {
		path := filepath.Join(GinkgoT().TempDir(), "link")
		a, err := shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleCreate})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(a.Close)
		pool := newPool("bulk", 4096)
		startPort(a, pool)
		echo := startEcho(path)
		Eventually(func() bool { return a.Link().Up }).WithTimeout(5 * time.Second).Should(BeTrue())

		const size = 1514
		const total = 256 << 20
		frames := uint32((total + size - 1) / size)
		want := make([]byte, size)
		tx := make([]*hw.Mbuf, 0, 32)
		rx := make([]*hw.Mbuf, 32)
		var sent, got uint32
		var bytes uint64
		deadline := time.Now().Add(100 * time.Second)
		for got < frames && time.Now().Before(deadline) {
			for len(tx) < cap(tx) && sent+uint32(len(tx)) < frames {
				m := pool.Get()
				if m == nil {
					break
				}
				b, err := m.Append(size)
				Expect(err).NotTo(HaveOccurred())
				fill(b, sent+uint32(len(tx)))
				tx = append(tx, m)
			}
			k := a.TxBurst(0, tx)
			sent += uint32(k)
			tx = append(tx[:0], tx[k:]...)
			n := a.RxBurst(0, rx)
			for _, m := range rx[:n] {
				fill(want, got)
				if string(m.Data()) != string(want) {
					Fail(fmt.Sprintf("frame %d of %d came back different", got, frames))
				}
				bytes += uint64(m.DataLen)
				got++
				m.Free()
			}
			if k == 0 && n == 0 {
				runtime.Gosched()
			}
		}
		for _, m := range tx {
			m.Free()
		}
		Expect(got).To(Equal(frames), "every frame came back")
		Expect(bytes).To(BeNumerically(">=", total))
		st := a.Stats()
		Expect(st.OBytes).To(BeNumerically(">=", uint64(total)), "256 MiB out")
		Expect(st.IBytes).To(BeNumerically(">=", uint64(total)), "256 MiB back")
		Expect(st.IErrors + st.OErrors + st.RxNoMbuf).To(BeZero())
		GinkgoWriter.Printf("xstats: %v\n", a.XStats())

		stop := pool.Get()
		b, _ := stop.Append(60)
		fill(b, 0)
		binary.BigEndian.PutUint16(b[12:14], 0x88b6)
		Expect(a.TxBurst(0, []*hw.Mbuf{stop})).To(Equal(1))
		Eventually(func() error { return echo.Wait() }).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(func() bool { return a.Link().Up }).WithTimeout(5*time.Second).Should(BeFalse(), "the link goes down with the peer")
		Expect(pool.Stats().InUse).To(BeZero(), "every mbuf back in the pool")
	})

	It("sees a peer killed with SIGKILL gone: the link goes down, peer_gone counts it, and frames sent meanwhile are dropped and counted", func() {
		path := filepath.Join(GinkgoT().TempDir(), "link")
		a, err := shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleCreate})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(a.Close)
		pool := newPool("gone", 256)
		startPort(a, pool)
		echo := startEcho(path)
		Eventually(func() bool { return a.Link().Up }).WithTimeout(5 * time.Second).Should(BeTrue())
		Expect(echo.Process.Signal(syscall.SIGKILL)).To(Succeed())
		_ = echo.Wait()
		Eventually(func() bool { return a.Link().Up }).WithTimeout(5 * time.Second).Should(BeFalse())
		Expect(xstat(a, "peer_gone")).To(BeEquivalentTo(1))
		m := pool.Get()
		b, _ := m.Append(60)
		fill(b, 1)
		Expect(a.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1), "taken and dropped, as a NIC without carrier")
		Expect(xstat(a, "tx_link_down")).To(BeEquivalentTo(1))
		Expect(pool.Stats().InUse).To(BeZero())

		// A new attacher takes the dead one's place.
		startEcho(path)
		Eventually(func() bool { return a.Link().Up }).WithTimeout(5 * time.Second).Should(BeTrue())
	})
})

// xstat returns the port's extended statistic name.
func xstat(p hw.EthDev, name string) uint64 {
	for _, x := range p.XStats() {
		if x.Name == name {
			return x.Value
		}
	}
	Fail("no xstat " + name)
	return 0
}
