package work

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/savanna-sim/savanna/bench/netw"
)

// SplitKernel is the kernel network whose many-workload echo server runs
// in another process: a process may hold 20,000 descriptors here, and
// both ends of 10k connections need more. Command returns the command
// that runs ServeEchoProcess (the bench binary re-executed with a flag).
type SplitKernel struct {
	*netw.Kernel
	Command func(port uint16, msgSize int) *exec.Cmd
}

// StartEcho implements RemoteEcho.
func (k SplitKernel) StartEcho(port uint16, msgSize int) (func() (int64, int64, error), error) {
	cmd := k.Command(port, msgSize)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("echo process: %w", err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("echo process: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("echo process: %w", err)
	}
	out := bufio.NewReader(outp)
	line, err := out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("echo process did not start: %q %v", line, err)
	}
	base, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "ready")), 10, 64)
	var once sync.Once
	var peak int64
	var res error
	return func() (int64, int64, error) {
		once.Do(func() {
			_ = in.Close()
			line, err := out.ReadString('\n')
			if err != nil {
				res = fmt.Errorf("echo process: %w", err)
			} else if !strings.HasPrefix(line, "peak ") {
				res = fmt.Errorf("echo process: %s", strings.TrimSpace(line))
			} else {
				peak, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "peak ")), 10, 64)
			}
			if err := cmd.Wait(); err != nil && res == nil {
				res = fmt.Errorf("echo process: %w", err)
			}
		})
		return base, peak, res
	}, nil
}

// ServeEchoProcess is the body of the echo process: it listens on the
// loopback port of family (127.0.0.1 or ::1), prints "ready <rss>", echoes msgSize-byte messages on
// every connection, and when in reaches EOF prints "peak <bytes>" (its
// VmHWM) or "error <text>".
func ServeEchoProcess(family int, port uint16, msgSize int, in io.Reader, out io.Writer) error {
	k, err := netw.NewKernel(family)
	if err != nil {
		return err
	}
	ln, err := net.Listen(k.Network(), k.HostPort(port))
	if err != nil {
		fmt.Fprintf(out, "error %v\n", err)
		return err
	}
	defer ln.Close()
	ResetPeak()
	rss, _ := Memory()
	var mu sync.Mutex
	var first error
	note := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if err := Echo(c, msgSize); err != nil {
					note(err)
				}
			}()
		}
	}()
	fmt.Fprintf(out, "ready %d\n", rss)
	_, _ = io.Copy(io.Discard, in)
	_, hwm := Memory()
	mu.Lock()
	defer mu.Unlock()
	if first != nil {
		fmt.Fprintf(out, "error %v\n", first)
		return first
	}
	fmt.Fprintf(out, "peak %d\n", hwm)
	return nil
}
