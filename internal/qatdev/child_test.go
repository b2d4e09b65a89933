package qatdev_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/savanna-sim/savanna/internal/qatdev"
	"github.com/savanna-sim/savanna/zlibshim"
)

// childEnv switches the test binary into a worker process; its value is
// the device process's socket. childPolicy is the shim's policy.
const (
	childEnv    = "QATDEV_TEST_CHILD_SOCKET"
	childPolicy = "QATDEV_TEST_CHILD_POLICY"
	// childThread makes the shim wait for completions (thread mode).
	childThread = "QATDEV_TEST_CHILD_THREAD"
)

// reply is one line a worker prints.
type reply struct {
	Event  string             `json:"event"`
	PID    int                `json:"pid"`
	OK     bool               `json:"ok"`
	Err    string             `json:"err,omitempty"`
	N      int                `json:"n"`
	Shim   zlibshim.Stats     `json:"shim"`
	Client qatdev.ClientStats `json:"client"`
}

// payload is n bytes that compress, but not to nothing.
func payload(n int, seed int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %d of worker %d: the quick brown fox %x\n", i, seed, i*i*2654435761)
	}
	return b.Bytes()[:n]
}

// runChild is a worker process: a zlibshim.Process over a qatdev.Client,
// driven by one command a line on stdin, answering one JSON line each.
func runChild(socket string) int {
	out := json.NewEncoder(os.Stdout)
	fail := func(err error) int {
		_ = out.Encode(reply{Event: "fatal", Err: err.Error()})
		return 2
	}
	client, err := qatdev.Dial(socket)
	if err != nil {
		return fail(err)
	}
	policy := zlibshim.PolicyFailover
	if os.Getenv(childPolicy) == "hardware-only" {
		policy = zlibshim.PolicyHardwareOnly
	}
	cfg := zlibshim.Config{Policy: policy, RetryAfter: -1}
	if os.Getenv(childThread) != "" {
		cfg.Completion = zlibshim.CompletionThread
	}
	p, err := zlibshim.NewProcess(client, client.PID(), client.Meter(), cfg)
	if err != nil {
		return fail(err)
	}
	r := reply{Event: "ready", PID: os.Getpid(), OK: true}
	if err := p.Start(); err != nil {
		r.Err = err.Error()
	}
	r.Shim = p.Stats()
	_ = out.Encode(r)
	var open []*zlibshim.Writer // streams never ended: the seed's leak
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		n := 0
		if len(f) > 1 {
			n, _ = strconv.Atoi(f[1])
		}
		r := reply{Event: f[0], OK: true}
		switch f[0] {
		case "compress": // one response, ended (DeflateEnd)
			if err := compressOnce(p, n, 1); err != nil {
				r.OK, r.Err = false, err.Error()
			}
		case "open": // n streams with a request each, never ended
			for i := range n {
				var sink bytes.Buffer
				w, _ := p.NewWriterLevel(&sink, zlibshim.FormatGzip, 6)
				_, err := w.Write(payload(8<<10, i))
				if err == nil {
					err = w.Flush()
				}
				open = append(open, w)
				if err != nil {
					r.OK, r.Err = false, err.Error()
					break
				}
				r.N++
				if p.Stats().Fallbacks.NoPinnedMemory > 0 {
					break
				}
			}
		case "ended": // n streams, each ended
			for i := range n {
				if err := compressOnce(p, 8<<10, i); err != nil {
					r.OK, r.Err = false, err.Error()
					break
				}
				r.N++
			}
		case "loop": // requests until killed
			_ = out.Encode(reply{Event: "looping", OK: true})
			for i := 0; i < 1_000_000; i++ {
				var sink bytes.Buffer
				w, _ := p.NewWriterLevel(&sink, zlibshim.FormatGzip, 6)
				_, _ = w.Write(payload(64<<10, i))
				_ = w.Flush()
				open = append(open, w)
				if len(open) > 8 {
					_ = open[0].Close()
					open = open[1:]
				}
			}
		case "crash": // gone without a word: no Exit, no DeflateEnd
			os.Exit(3)
		case "exit": // the worker's clean exit
			p.Exit()
			r.Err = errString(client.Close())
			r.Shim, r.Client = p.Stats(), client.Stats()
			_ = out.Encode(r)
			return 0
		default:
			r.OK, r.Err = false, "unknown command "+f[0]
		}
		r.Shim, r.Client = p.Stats(), client.Stats()
		_ = out.Encode(r)
	}
	return 0
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// compressOnce compresses n bytes in one gzip stream, ended, and checks
// that the output inflates to the input.
func compressOnce(p *zlibshim.Process, n, seed int) error {
	data := payload(n, seed)
	var sink bytes.Buffer
	w, err := p.NewWriterLevel(&sink, zlibshim.FormatGzip, 6)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	zr, err := gzip.NewReader(&sink)
	if err != nil {
		return fmt.Errorf("output is not gzip: %w", err)
	}
	back, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("output does not inflate: %w", err)
	}
	if !bytes.Equal(back, data) {
		return fmt.Errorf("output inflates to %d bytes, not the %d given", len(back), len(data))
	}
	return nil
}

// worker is a worker process the spec started.
type worker struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	ready reply
}

// startWorker starts the test binary as a worker on socket and waits for
// its ready line.
func startWorker(socket, policy string, env ...string) *worker {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+socket, childPolicy+"="+policy), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	outp, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed())
	w := &worker{cmd: cmd, in: in, out: bufio.NewScanner(outp)}
	w.out.Buffer(make([]byte, 1<<20), 1<<20)
	w.ready = w.read()
	Expect(w.ready.Event).To(Equal("ready"), "worker: %+v", w.ready)
	return w
}

// read reads one reply, failing the spec after 20 s.
func (w *worker) read() reply {
	ch := make(chan reply, 1)
	go func() {
		var r reply
		if w.out.Scan() {
			if err := json.Unmarshal(w.out.Bytes(), &r); err != nil {
				r = reply{Event: "garbled", Err: w.out.Text()}
			}
		} else {
			r = reply{Event: "eof"}
		}
		ch <- r
	}()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		_ = w.cmd.Process.Kill()
		Fail("worker did not answer within 20 s")
	}
	return reply{}
}

// do sends a command and returns the reply.
func (w *worker) do(cmd string) reply {
	_, err := fmt.Fprintln(w.in, cmd)
	Expect(err).NotTo(HaveOccurred())
	return w.read()
}

// wait waits for the process to end and returns its exit code.
func (w *worker) wait() int {
	_ = w.in.Close()
	err := w.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	Expect(err).NotTo(HaveOccurred())
	return 0
}

// kill ends a worker the spec started, by its PID.
func (w *worker) kill() {
	if w.cmd.ProcessState == nil {
		_ = w.cmd.Process.Kill()
		_ = w.cmd.Wait()
	}
}
