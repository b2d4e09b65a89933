package calibrate

import (
	"fmt"
	"runtime"
	"time"

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
			d, err := roundTrips(c, c, s, s, iters(20_000, scale))
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
			defer unix.Close(req[1])
			if err := unix.Pipe2(resp[:], unix.O_CLOEXEC); err != nil {
				return Sample{}, fmt.Errorf("pipe2: %w", err)
			}
			defer unix.Close(resp[0])
			defer unix.Close(resp[1])
			d, err := roundTrips(req[1], resp[0], req[0], resp[1], iters(20_000, scale))
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

// roundTrips runs n timed round trips (after a warm-up): the client
// writes a request to cw and reads the response from cr; the server
// reads the request from sr and writes the response to sw. It returns
// the wall time per round trip in ns.
func roundTrips(cw, cr, sr, sw, n int) (float64, error) {
	const warm = 1000
	srvErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		buf := make([]byte, rrMessage)
		for range warm + n {
			if err := readFull(sr, buf); err != nil {
				srvErr <- err
				return
			}
			if err := writeFull(sw, buf); err != nil {
				srvErr <- err
				return
			}
		}
		srvErr <- nil
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, rrMessage)
	var start time.Time
	for i := range warm + n {
		if i == warm {
			start = time.Now()
		}
		if err := writeFull(cw, buf); err != nil {
			return 0, err
		}
		if err := readFull(cr, buf); err != nil {
			return 0, err
		}
	}
	d := time.Since(start)
	if err := <-srvErr; err != nil {
		return 0, err
	}
	return float64(d) / float64(n), nil
}

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
			return fmt.Errorf("read: end of stream")
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
