package calibrate

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// tcpRR is a request/response over loopback TCP between two threads with
// blocking sockets and TCP_NODELAY (netperf TCP_RR's shape): each round
// trip is two segments, each through the kernel's TCP and IP output,
// loopback's transmit, the receive softirq and TCP input, plus the
// system calls, copies and wake-ups that pipeRR has too.
func tcpRR() Bench {
	return Bench{Name: "tcp_rr_loopback", Unit: "ns/round trip",
		What: fmt.Sprintf("%d-byte request and response over TCP on 127.0.0.1, blocking sockets, TCP_NODELAY, two threads, wall time per round trip", rrMessage),
		Run: func(scale float64) (Sample, error) {
			c, s, err := tcpPair()
			if err != nil {
				return Sample{}, err
			}
			defer unix.Close(c)
			defer unix.Close(s)
			// Shutting the client's side down ends the server's loop.
			d, err := roundTrips(c, c, s, s, budgetFor(scale), func() { unix.Shutdown(c, unix.SHUT_WR) })
			return Sample{Value: d}, err
		}}
}

// pipeRR is the same request/response over two pipes: the system calls,
// copies, wake-ups and switches of tcpRR without TCP and IP.
func pipeRR() Bench {
	return Bench{Name: "pipe_rr", Unit: "ns/round trip",
		What: fmt.Sprintf("%d-byte request and response over two pipes, two threads, wall time per round trip", rrMessage),
		Run: func(scale float64) (Sample, error) {
			var req, resp [2]int
			if err := unix.Pipe2(req[:], unix.O_CLOEXEC); err != nil {
				return Sample{}, fmt.Errorf("pipe2: %w", err)
			}
			defer unix.Close(req[0])
			defer func() {
				if req[1] >= 0 {
					unix.Close(req[1])
				}
			}()
			if err := unix.Pipe2(resp[:], unix.O_CLOEXEC); err != nil {
				return Sample{}, fmt.Errorf("pipe2: %w", err)
			}
			defer unix.Close(resp[0])
			defer unix.Close(resp[1])
			// Closing the request pipe's write end ends the server's loop.
			d, err := roundTrips(req[1], resp[0], req[0], resp[1], budgetFor(scale), func() {
				unix.Close(req[1])
				req[1] = -1
			})
			return Sample{Value: d}, err
		}}
}

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair() (client, server int, err error) {
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(ln)
	lo := &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(ln, lo); err != nil {
		return -1, -1, fmt.Errorf("bind 127.0.0.1: %w", err)
	}
	if err := unix.Listen(ln, 1); err != nil {
		return -1, -1, fmt.Errorf("listen: %w", err)
	}
	sa, err := unix.Getsockname(ln)
	if err != nil {
		return -1, -1, fmt.Errorf("getsockname: %w", err)
	}
	client, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("socket: %w", err)
	}
	// A loopback connect completes against the backlog without accept.
	if err := unix.Connect(client, sa); err != nil {
		unix.Close(client)
		return -1, -1, fmt.Errorf("connect 127.0.0.1: %w", err)
	}
	server, _, err = unix.Accept4(ln, unix.SOCK_CLOEXEC)
	if err != nil {
		unix.Close(client)
		return -1, -1, fmt.Errorf("accept: %w", err)
	}
	for _, fd := range []int{client, server} {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			unix.Close(client)
			unix.Close(server)
			return -1, -1, fmt.Errorf("TCP_NODELAY: %w", err)
		}
	}
	return client, server, nil
}

// roundTrips runs timed batches of round trips: the client writes a
// request to cw and reads the response from cr; the server reads the
// request from sr and writes the response to sw. The client runs on the
// measuring CPU and the server on the partner CPU (cpuPair), each
// thread pinned, so that every run has the same placement; stop ends
// the server's loop (its read sees the end of the stream). It returns
// the wall time per round trip in ns.
func roundTrips(cw, cr, sr, sw int, bud budget, stop func()) (float64, error) {
	client, server, err := cpuPair()
	if err != nil {
		return 0, err
	}
	srvErr, srvReady := make(chan error, 1), make(chan error, 1)
	go func() {
		if err := pinThread(server); err != nil {
			srvReady <- err
			return
		}
		srvReady <- nil
		buf := make([]byte, rrMessage)
		for {
			if err := readFull(sr, buf); err != nil {
				if errors.Is(err, errEndOfStream) {
					err = nil
				}
				srvErr <- err
				return
			}
			if err := writeFull(sw, buf); err != nil {
				srvErr <- err
				return
			}
		}
	}()
	if err := <-srvReady; err != nil {
		return 0, err
	}
	s, err := onPinned(client, func() (Sample, error) {
		buf := make([]byte, rrMessage)
		v, _, err := timeBatches(bud, wallClock(), func(n int) (float64, error) {
			for range n {
				if err := writeFull(cw, buf); err != nil {
					return 0, err
				}
				if err := readFull(cr, buf); err != nil {
					return 0, err
				}
			}
			return float64(n), nil
		})
		return Sample{Value: v}, err
	})
	stop()
	if serr := <-srvErr; err == nil {
		err = serr
	}
	return s.Value, err
}

// errEndOfStream is a read that found the other side shut down.
var errEndOfStream = errors.New("read: end of stream")

func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if n == 0 {
			return errEndOfStream
		}
		b = b[n:]
	}
	return nil
}

func writeFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		b = b[n:]
	}
	return nil
}
