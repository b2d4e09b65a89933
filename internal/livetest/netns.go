package livetest

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DialInNetns opens a TCP connection to addr from inside ns.
func DialInNetns(ns, addr string, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	err := InNetns(ns, func() error {
		var err error
		c, err = net.DialTimeout("tcp", addr, timeout)
		return err
	})
	return c, err
}

// HTTPGetInNetns fetches url (http://host:port/...) from inside ns and
// returns the body of a 200 answer. The connection is made on the
// namespace's thread; net/http would dial from another goroutine, so the
// request is written by hand.
func HTTPGetInNetns(ns, url string, timeout time.Duration) (string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	req.Close = true
	c, err := DialInNetns(ns, req.URL.Host, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if err := req.Write(c); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&b); err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return b.String(), fmt.Errorf("GET %s: %s: %s", url, resp.Status, b.String())
	}
	return b.String(), nil
}

// Proc is a program started in a namespace, its output collected; it
// runs for at most the time it was started with.
type Proc struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	mu     sync.Mutex
	out    strings.Builder
	exited chan struct{}
	err    error
	once   sync.Once
}

// Write collects the program's output.
func (p *Proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// StartInNetns starts a program inside ns (ip netns exec) that is killed
// if still running after limit.
func StartInNetns(ns string, limit time.Duration, name string, args ...string) (*Proc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	p := &Proc{cancel: cancel, exited: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, name}, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Output returns what the program printed so far.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Wait waits for the program to end by itself and returns its error.
func (p *Proc) Wait() error {
	<-p.exited
	return p.err
}

// Stop ends the program, by its PID: SIGTERM, then SIGKILL after 10 s.
// It returns the program's error; only the first call signals.
func (p *Proc) Stop() error {
	p.once.Do(func() {
		select {
		case <-p.exited:
			return
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	p.cancel()
	return p.err
}

// DeleteNetns kills, by PID, every process still in the network
// namespace ns (`ip netns pids`), then deletes it. A spec's namespace
// holds only what the spec started, so this stops only those: a daemon
// whose master was killed leaves workers behind (nginx's, when a spec
// fails before `nginx -s quit`), and a worker whose stack process is gone
// may spin on its errors for the rest of the suite.
func DeleteNetns(ns string) {
	out, _ := Run(10*time.Second, "ip", "netns", "pids", ns)
	// ip netns pids reads /proc/PID/ns/net, the thread-group leader's:
	// this process is listed when the goroutine that entered the
	// namespace ran on Go's main thread, which the runtime keeps (wedged
	// in the namespace) rather than ending it. It must not kill itself.
	self := os.Getpid()
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != self {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	_, _ = Run(10*time.Second, "ip", "netns", "del", ns)
}

// WriteRandom writes total bytes of a seeded pseudo-random stream to c in
// 64 KiB writes, hashing each into sent, then half-closes c: the sending
// side of the specs that carry a large transfer and compare digests. It
// returns the first write's error or CloseWrite's.
func WriteRandom(c *net.TCPConn, total int, sent hash.Hash) error {
	r := rand.New(rand.NewPCG(42, 43))
	buf := make([]byte, 64<<10)
	for n := 0; n < total; n += len(buf) {
		for i := 0; i < len(buf); i += 8 {
			binary.LittleEndian.PutUint64(buf[i:], r.Uint64())
		}
		sent.Write(buf)
		if _, err := c.Write(buf); err != nil {
			return err
		}
	}
	return c.CloseWrite()
}
