//go:build linux

package tap_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
)

var _ = Describe("live interop with the Linux kernel over a TAP", Label("live", "slow"), func() {
	BeforeEach(liveSkip)

	DescribeTable("serves kv to redis-cli and redis-benchmark", func(cores int, ready string) {
		ensureTools()
		l := startServe("kv", 6379, "--cores", fmt.Sprint(cores))
		Expect(l.ready).To(Equal(ready))

		Expect(l.RedisSetGet(stackIP, "greeting", "hello savanna")).To(Succeed())
		found, err := l.RedisBenchmark(10*time.Minute, stackIP)
		Expect(err).NotTo(HaveOccurred())
		for _, t := range livetest.RedisBenchmarkTests() {
			AddReportEntry(fmt.Sprintf("redis-benchmark %s (%d lcores)", t, cores), found[t]+" requests per second")
			GinkgoWriter.Printf("redis-benchmark %s (%d lcores): %s requests per second\n", t, cores, found[t])
		}
		Expect(l.Stop()).To(Succeed())
		// Every request reached the server: 4 tests x 100000, plus the
		// two redis-cli commands and the CONFIG GETs redis-benchmark
		// sends at start.
		Expect(l.Stat("app kv", "commands")).To(BeNumerically(">=", 400002))
	},
		Entry("on 1 lcore", 1, "savanna: serving kv on 10.77.0.2:6379 (tap sv0, 1 lcore)"),
		Entry("on 2 lcores over a multi-queue TAP", 2, "savanna: serving kv on 10.77.0.2:6379 (tap sv0, 2 lcores)"),
	)

	It("echoes 1000 concurrent kernel connections", func() {
		l := startServe("echo", 7)
		const conns = 1000
		var cs []net.Conn
		l.inNetns(func() {
			d := net.Dialer{Timeout: 20 * time.Second}
			for i := 0; i < conns; i++ {
				c, err := d.Dial("tcp", stackIP+":7")
				Expect(err).NotTo(HaveOccurred(), "dial %d", i)
				cs = append(cs, c)
			}
		})
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for i, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(60 * time.Second))
				msg := []byte(fmt.Sprintf("connection %d says hello to savanna; %s", i, strings.Repeat("x", i%200)))
				if _, err := c.Write(msg); err != nil {
					errs <- fmt.Errorf("conn %d write: %w", i, err)
					return
				}
				got := make([]byte, len(msg))
				if _, err := io.ReadFull(c, got); err != nil {
					errs <- fmt.Errorf("conn %d read: %w", i, err)
					return
				}
				if string(got) != string(msg) {
					errs <- fmt.Errorf("conn %d: got %q", i, got)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(l.Stop()).To(Succeed())
		Expect(l.Stat("app echo", "conns")).To(BeEquivalentTo(conns))
	})

	DescribeTable("echoes 256 MiB intact",
		func(netem []string, serveArgs ...string) {
			l := startServe("echo", 7, serveArgs...)
			if netem != nil {
				out, err := l.Exec(10*time.Second, "tc", append([]string{"qdisc", "add", "dev", tapName, "root", "netem"}, netem...)...)
				if err != nil {
					Skip("tc netem unavailable on this kernel: " + out)
				}
			}
			sum, el := echoBulk(l, 256<<20)
			AddReportEntry("256 MiB echo", fmt.Sprintf("%v, sha256 %s, netem %v", el, sum, netem))
			if netem != nil {
				qd, _ := l.Exec(10*time.Second, "tc", "-s", "qdisc", "show", "dev", tapName)
				GinkgoWriter.Printf("%s\n", qd)
			}
			Expect(l.Stop()).To(Succeed())
		},
		Entry("on a clean link", nil),
		Entry("with netem adding 1% loss and reordering on the kernel side", []string{"delay", "1ms", "reorder", "1%", "50%", "loss", "1%"}),
		// The same impairment applied by the TAP port to what the kernel
		// sent, for kernels without sch_netem.
		Entry("with 1% loss and 1% reordering of the kernel's frames at the TAP", nil,
			"--rx-loss", "0.01", "--rx-reorder", "0.01", "--seed", "7"),
	)
})

// echoBulk sends total pseudo-random bytes from a kernel socket in the
// namespace to the echo server, reads the echo concurrently, and checks
// both sha256 sums; it returns the sum and the time taken.
func echoBulk(l *live, total int) (string, time.Duration) {
	var c net.Conn
	l.inNetns(func() {
		var err error
		c, err = net.DialTimeout("tcp", stackIP+":7", 20*time.Second)
		Expect(err).NotTo(HaveOccurred())
	})
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(8 * time.Minute))
	sent := sha256.New()
	start := time.Now()
	werr := make(chan error, 1)
	go func() { werr <- livetest.WriteRandom(c.(*net.TCPConn), total, sent) }()
	got := sha256.New()
	n, err := io.Copy(got, c)
	Expect(err).NotTo(HaveOccurred())
	Expect(<-werr).To(Succeed())
	el := time.Since(start)
	Expect(n).To(BeEquivalentTo(total))
	sum := fmt.Sprintf("%x", got.Sum(nil))
	Expect(sum).To(Equal(fmt.Sprintf("%x", sent.Sum(nil))))
	GinkgoWriter.Printf("%d MiB echoed in %v (%.1f MB/s each way); sha256 %s\n", total>>20, el, float64(total)/el.Seconds()/1e6, sum)
	return sum, el
}
