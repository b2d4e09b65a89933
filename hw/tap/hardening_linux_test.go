//go:build linux

package tap_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
	"golang.org/x/sys/unix"
)

// The attack of issue 17 ("what it must show"), scaled to what one TAP
// queue carries in a spec's time. Every loop is bounded in count and in
// time.
const (
	budget         = 1 << 30 // --memory-limit
	bulkClients    = 12
	bulkLen        = 512 << 20 // the announced $536870912
	bulkFor        = 20 * time.Second
	pipeClients    = 700
	pipeFor        = 25 * time.Second
	pipeBlockAfter = 2 * time.Second // a write blocked this long ends a pipeliner
	lorisConns     = 5000
	lorisDialers   = 32
	lorisEvery     = 4 * time.Second // one byte of a command this often
	lorisBytes     = 3               // then the connection stays silent
	lorisHold      = 40 * time.Second
	pingEvery      = 250 * time.Millisecond
	pingTimeout    = 3 * time.Second // a new connection's PING
	// keptPingTimeout bounds a PING on the kept connection. The attack's
	// first second of 5,700 connects overflows the kernel's queue to the
	// TAP (txqueuelen 1000; 22-27% of the kernel's frames dropped there
	// while the machine is loaded), and a PING segment dropped there
	// twice waits out Linux's retransmission back-off (RTO ~0.86 s, then
	// ~1.7 s): 3 s failed on a busy machine with serve answering every
	// PING that reached it. 10 s covers three such losses and still fails
	// a server that stops answering.
	keptPingTimeout = 10 * time.Second
	bigValue        = 1 << 20 // the value the pipeliners GET
)

// hardeningArgs are serve's limits for the spec: the 1 GiB budget split
// as documented, an idle timeout the slowloris connections meet within
// the spec, maxclients and max-conns below what the attack opens, and an
// output limit the pipeliners meet before maxmemory.
var hardeningArgs = []string{"--memory-limit", "1GiB", "--timeout", "10s", "--maxclients", "5000",
	"--max-conns", "5400", "--client-output-buffer-limit", "8mb 2mb 5",
	"--metrics", "127.0.0.1:9464", "--ctl", "none"}

var _ = Describe("simrun serve under attack, with a 1 GiB memory budget", Label("live", "slow"), func() {
	BeforeEach(liveSkip)

	It("keeps a legitimate client answered and its RSS under the budget while 12 bulk writers, 700 pipeliners and 5,000 slowloris connections press it", func() {
		raiseNoFile(lorisConns + pipeClients + 1024)
		l := startServe("kv", 6379, hardeningArgs...)
		pid := servePID(l.PID())
		GinkgoWriter.Printf("serve PID %d\n", pid)

		// The legitimate client: one connection made before the attack,
		// which every 250 ms sends a PING and must get PONG, and a new
		// connection every 250 ms, whose answers are counted (at
		// maxclients and max-conns a new one is refused, as Redis's is).
		legit := dialNS(l.NS, 0)
		DeferCleanup(legit.Close)
		lr := bufio.NewReader(legit)
		_ = legit.SetDeadline(time.Now().Add(20 * time.Second))
		val := bytes.Repeat([]byte("v"), bigValue)
		_, err := fmt.Fprintf(legit, "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n%s\r\n", len(val), val)
		Expect(err).NotTo(HaveOccurred())
		Expect(lr.ReadString('\n')).To(Equal("+OK\r\n"))

		stop := make(chan struct{})
		var bg sync.WaitGroup
		mem := &rssWatch{pid: pid}
		bg.Add(1)
		go func() { defer bg.Done(); mem.run(stop) }()
		var pings pingLog
		bg.Add(1)
		go func() { defer bg.Done(); pings.run(stop, l.NS, legit, lr) }()

		attack := time.Now()
		var at sync.WaitGroup
		bulk := &attackLog{}
		pipe := &attackLog{}
		loris := &attackLog{}
		for i := 0; i < bulkClients; i++ {
			at.Add(1)
			go func() { defer at.Done(); bulkWriter(l.NS, bulk) }()
		}
		for i := 0; i < pipeClients; i++ {
			at.Add(1)
			go func() { defer at.Done(); pipeliner(l.NS, i, pipe) }()
		}
		at.Add(1)
		go func() { defer at.Done(); slowloris(l.NS, loris) }()

		// One reading of the metrics mid-attack, from inside the
		// namespace.
		time.Sleep(15 * time.Second)
		mid, err := livetest.HTTPGetInNetns(l.NS, "http://127.0.0.1:9464/metrics", 10*time.Second)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("metrics 15 s into the attack:\n%s", refusalMetrics(mid))
		at.Wait()
		attackTook := time.Since(attack)
		pings.markAttackOver()
		// The legitimate client goes on for 5 s after the attack.
		time.Sleep(5 * time.Second)
		close(stop)
		bg.Wait()
		end, err := livetest.HTTPGetInNetns(l.NS, "http://127.0.0.1:9464/metrics", 10*time.Second)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("metrics after the attack:\n%s", refusalMetrics(end))
		hwm, rss := mem.read()
		Expect(l.Stop()).To(Succeed())

		report := func(name, v string) {
			AddReportEntry(name, v)
			GinkgoWriter.Printf("%s: %s\n", name, v)
		}
		report("attack", fmt.Sprintf("%v; bulk: %s; pipeline: %s; slowloris: %s", attackTook.Round(time.Millisecond), bulk, pipe, loris))
		report("legitimate client", pings.String())
		report("serve memory", fmt.Sprintf("VmHWM %d MiB (sampled peak VmRSS %d MiB, last VmRSS %d MiB), budget %d MiB",
			hwm>>20, mem.peak()>>20, rss>>20, budget>>20))
		stats := map[string]int64{}
		for _, k := range [][2]string{
			{"app kv", "query_buffer_limit_closed"}, {"app kv", "query_buffer_oom_closed"}, {"app kv", "oom_refused"},
			{"app kv", "output_buffer_limit_closed"}, {"app kv", "output_buffer_oom_closed"},
			{"app kv", "idle_timeout_closed"}, {"app kv", "maxclients_refused"}, {"app kv", "protocol_errors"},
			{"app kv", "used_memory_peak"}, {"app kv", "conns"}, {"app kv", "commands"},
			{"lcore0 tcp", "conn_limit_refused"}, {"lcore0 tcp", "conn_limit_rsts"},
			{"tcp mem", "pressure_entries"}, {"tcp mem", "peak_bytes"},
			{"nic", "ibytes"}, {"nic", "obytes"},
		} {
			stats[k[0]+" "+k[1]] = l.Stat(k[0], k[1])
		}
		keys := make([]string, 0, len(stats))
		for k := range stats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var sb strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&sb, "%s=%d; ", k, stats[k])
		}
		report("serve's final counters", sb.String())
		report("TAP throughput during the attack", fmt.Sprintf("%.1f MB/s from the kernel, %.1f MB/s to it (whole run)",
			float64(stats["nic ibytes"])/attackTook.Seconds()/1e6, float64(stats["nic obytes"])/attackTook.Seconds()/1e6))

		Expect(pings.failed()).To(BeEmpty(), "every PING on the legitimate connection got PONG")
		Expect(pings.ok.Load()).To(BeNumerically(">=", int64(attackTook/pingEvery)/2), "the PINGs ran through the attack")
		Expect(pings.freshAfter()).To(BeEmpty(), "a new connection gets PONG once the attack is over")
		Expect(hwm).To(BeNumerically("<", budget), "serve's peak RSS (VmHWM) stays under --memory-limit")
		Expect(mem.peak()).To(BeNumerically("<", budget))
		Expect(stats["app kv query_buffer_oom_closed"]+stats["app kv query_buffer_limit_closed"]).To(BeNumerically(">=", bulkClients),
			"each 512 MiB SET was refused before its value was held")
		Expect(stats["app kv output_buffer_limit_closed"]+stats["app kv output_buffer_oom_closed"]).To(BeNumerically(">", 0),
			"pipeliners that never read were closed")
		Expect(stats["app kv idle_timeout_closed"]).To(BeNumerically(">", 0), "silent slowloris connections met --timeout")
		Expect(stats["app kv maxclients_refused"]+stats["lcore0 tcp conn_limit_refused"]).To(BeNumerically(">", 0),
			"maxclients or max-conns turned connections away")
		Expect(strings.Contains(end, "savanna_kv_idle_timeout_closed")).To(BeTrue(), "the metrics carry kv's refusal counters")
	})
})

// raiseNoFile raises the test process's open-file limit to n (the attack
// holds one descriptor per connection), restoring it afterwards.
func raiseNoFile(n uint64) {
	var old unix.Rlimit
	Expect(unix.Getrlimit(unix.RLIMIT_NOFILE, &old)).To(Succeed())
	lim := old
	if lim.Cur < n {
		lim.Cur = n
	}
	if lim.Max < n {
		lim.Max = n
	}
	Expect(unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)).To(Succeed())
	DeferCleanup(func() { _ = unix.Setrlimit(unix.RLIMIT_NOFILE, &old) })
}

// servePID finds simrun's process: pid itself when ip netns exec execed
// it (pid no longer runs ip), else the child of pid's threads.
func servePID(pid int) int {
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && filepath.Base(exe) != "ip" {
		return pid
	}
	kids, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, k := range kids {
		b, _ := os.ReadFile(k)
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				return c
			}
		}
	}
	Fail(fmt.Sprintf("no simrun process under PID %d", pid))
	return 0
}

// dialNS connects to the server from inside ns; rcvBuf, when not 0,
// bounds the kernel's receive buffer of the socket (so that replies
// nobody reads pile up at the server, not in the kernel).
func dialNS(ns string, rcvBuf int) net.Conn {
	c, err := tryDialNS(ns, rcvBuf, 20*time.Second)
	Expect(err).NotTo(HaveOccurred())
	return c
}

func tryDialNS(ns string, rcvBuf int, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	err := livetest.InNetns(ns, func() error {
		d := net.Dialer{Timeout: timeout}
		if rcvBuf > 0 {
			d.Control = func(_, _ string, rc syscall.RawConn) error {
				var serr error
				err := rc.Control(func(fd uintptr) {
					serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, rcvBuf)
				})
				return errors.Join(err, serr)
			}
		}
		var err error
		c, err = d.Dial("tcp", stackIP+":6379")
		return err
	})
	return c, err
}

// attackLog counts what one kind of attacker did.
type attackLog struct {
	conns, refused, closedByServer, bytes, blocked atomic.Int64
}

func (a *attackLog) String() string {
	return fmt.Sprintf("%d connected, %d refused at connect, %d closed by the server, %d MiB sent, %d writes blocked %v",
		a.conns.Load(), a.refused.Load(), a.closedByServer.Load(), a.bytes.Load()>>20, a.blocked.Load(), pipeBlockAfter)
}

// bulkWriter announces a 512 MiB SET and writes the value from a reused
// buffer for as long as the server takes it, up to bulkFor.
func bulkWriter(ns string, a *attackLog) {
	c, err := tryDialNS(ns, 0, 10*time.Second)
	if err != nil {
		a.refused.Add(1)
		return
	}
	defer c.Close()
	a.conns.Add(1)
	_ = c.SetWriteDeadline(time.Now().Add(bulkFor))
	if _, err := fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n", bulkLen); err != nil {
		a.closedByServer.Add(1)
		return
	}
	buf := bytes.Repeat([]byte("x"), 256<<10)
	for sent := 0; sent < bulkLen; sent += len(buf) {
		n, err := c.Write(buf)
		a.bytes.Add(int64(n))
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				a.closedByServer.Add(1)
			}
			return
		}
	}
}

// pipeliner writes SETs of a 64 KiB value and GETs of the 1 MiB one, in
// a loop, never reading a reply, until a write fails (the server closed
// the connection) or pipeFor passes; a write blocked for pipeBlockAfter
// is tried again, so that the connection stays open, unread, for the
// server's limits to meet.
func pipeliner(ns string, i int, a *attackLog) {
	c, err := tryDialNS(ns, 64<<10, 10*time.Second)
	if err != nil {
		a.refused.Add(1)
		return
	}
	defer c.Close()
	a.conns.Add(1)
	var batch bytes.Buffer
	v := bytes.Repeat([]byte("p"), 64<<10)
	fmt.Fprintf(&batch, "*3\r\n$3\r\nSET\r\n$%d\r\np%d\r\n$%d\r\n%s\r\n", len(fmt.Sprintf("p%d", i)), i, len(v), v)
	for j := 0; j < 16; j++ {
		batch.WriteString("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n")
	}
	end := time.Now().Add(pipeFor)
	for time.Now().Before(end) {
		_ = c.SetWriteDeadline(time.Now().Add(pipeBlockAfter))
		n, err := c.Write(batch.Bytes())
		a.bytes.Add(int64(n))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			a.blocked.Add(1)
			continue
		}
		if err != nil {
			a.closedByServer.Add(1)
			return
		}
	}
}

// slowloris opens lorisConns connections (lorisDialers at a time), each
// sending one byte of a command every lorisEvery, lorisBytes in all,
// then silent; each is held until the server closes it or lorisHold
// passes.
func slowloris(ns string, a *attackLog) {
	cmd := []byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
	end := time.Now().Add(lorisHold)
	next := make(chan int)
	var wg sync.WaitGroup
	for d := 0; d < lorisDialers; d++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				c, err := tryDialNS(ns, 4<<10, 3*time.Second)
				if err != nil {
					a.refused.Add(1)
					continue
				}
				a.conns.Add(1)
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer c.Close()
					closed := make(chan struct{})
					go func() {
						// Whatever the server says (an -ERR at maxclients),
						// it then closes: the read ends.
						_ = c.SetReadDeadline(end)
						_, err := io.Copy(io.Discard, c)
						if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
							a.closedByServer.Add(1)
						}
						close(closed)
					}()
					t := time.NewTicker(lorisEvery)
					defer t.Stop()
					for b := 0; ; b++ {
						if b < lorisBytes {
							_ = c.SetWriteDeadline(end)
							n, _ := c.Write(cmd[b : b+1])
							a.bytes.Add(int64(n))
						}
						select {
						case <-closed:
							return
						case <-t.C:
						}
					}
				}()
			}
		}()
	}
	for i := 0; i < lorisConns && time.Now().Before(end); i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// rssWatch samples VmRSS of a process every 100 ms and reads its VmHWM.
type rssWatch struct {
	pid int
	max atomic.Int64
}

func (w *rssWatch) run(stop <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if _, rss := w.read(); rss > w.max.Load() {
			w.max.Store(rss)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func (w *rssWatch) peak() int64 { return w.max.Load() }

var statusKB = regexp.MustCompile(`(?m)^(VmHWM|VmRSS):\s+(\d+) kB`)

// read returns VmHWM and VmRSS in bytes.
func (w *rssWatch) read() (hwm, rss int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.pid))
	if err != nil {
		return 0, 0
	}
	for _, m := range statusKB.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		if m[1] == "VmHWM" {
			hwm = n << 10
		} else {
			rss = n << 10
		}
	}
	return hwm, rss
}

// pingLog is the legitimate client's record.
type pingLog struct {
	ok, freshOK, freshRefused atomic.Int64
	mu                        sync.Mutex
	failures, freshFails      []string
	over                      atomic.Bool
	slowest                   time.Duration
	// inFlight is the fresh PINGs not yet answered.
	inFlight sync.WaitGroup
}

func (p *pingLog) markAttackOver() { p.over.Store(true) }

// run PINGs every pingEvery on the kept connection and on a new one.
func (p *pingLog) run(stop <-chan struct{}, ns string, c net.Conn, r *bufio.Reader) {
	t := time.NewTicker(pingEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			p.inFlight.Wait()
			return
		case <-t.C:
		}
		start := time.Now()
		_ = c.SetDeadline(start.Add(keptPingTimeout))
		_, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n"))
		var got string
		if err == nil {
			got, err = r.ReadString('\n')
		}
		took := time.Since(start)
		p.mu.Lock()
		if err != nil || got != "+PONG\r\n" {
			p.failures = append(p.failures, fmt.Sprintf("%s: %q %v", start.Format("15:04:05.000"), got, err))
		} else {
			p.ok.Add(1)
			p.slowest = max(p.slowest, took)
		}
		p.mu.Unlock()
		p.inFlight.Add(1)
		go func(after bool) { defer p.inFlight.Done(); p.fresh(ns, after) }(p.over.Load())
	}
}

// fresh PINGs on a new connection.
func (p *pingLog) fresh(ns string, after bool) {
	c, err := tryDialNS(ns, 0, pingTimeout)
	var got string
	if err == nil {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(pingTimeout))
		if _, err = c.Write([]byte("PING\r\n")); err == nil {
			got, err = bufio.NewReader(c).ReadString('\n')
		}
	}
	if err == nil && got == "+PONG\r\n" {
		p.freshOK.Add(1)
		return
	}
	p.freshRefused.Add(1)
	if after {
		p.mu.Lock()
		p.freshFails = append(p.freshFails, fmt.Sprintf("%q %v", got, err))
		p.mu.Unlock()
	}
}

func (p *pingLog) failed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failures
}

func (p *pingLog) freshAfter() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.freshFails
}

func (p *pingLog) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("kept connection: %d PONG, %d failed, slowest %v; new connections: %d PONG, %d refused or unanswered",
		p.ok.Load(), len(p.failures), p.slowest.Round(time.Millisecond), p.freshOK.Load(), p.freshRefused.Load())
}

// refusalMetrics picks the refusal, memory and limit lines out of a
// scrape.
func refusalMetrics(body string) string {
	var b strings.Builder
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, k := range []string{"closed", "refused", "conn_limit", "pressure", "used_memory", "tcp_mem", "resident_memory"} {
			if strings.Contains(line, k) {
				b.WriteString(line + "\n")
				break
			}
		}
	}
	return b.String()
}
