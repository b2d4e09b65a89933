package work

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/savanna-sim/savanna/bench/netw"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/rtc"
)

// RTCPingPong is PingPong on savanna-rtc: p.PingPongs round trips of
// p.MsgSize bytes each way on one connection (after p.Warmup untimed
// ones), each request carrying its number and each reply checked, the
// client and the echo server run to completion on their lcores. Each
// round trip's latency runs from the client's write of the request to
// its read of the whole reply, both read from the monotonic clock on
// the client's lcore.
func RTCPingPong(ctx context.Context, n netw.Network, p Params, port uint16) (Result, error) {
	res := Result{Workload: "pingpong", Network: n.Name(), MTU: n.MTU(), Family: n.Family()}
	s, err := rtcNet("pingpong", n)
	if err != nil {
		return res, err
	}
	if p.MsgSize < 9 {
		return res, fmt.Errorf("pingpong on %s: msg_size %d is below 9 (a number and a check byte)", n.Name(), p.MsgSize)
	}
	client, server := s.Runtimes()
	srv := make(chan error, 1)
	ln, err := rtc.Listen(server, port, 16, func(*rtc.Conn) rtc.Handler {
		return &echoServer{buf: make([]byte, p.MsgSize), done: srv}
	})
	if err != nil {
		return res, opErr("pingpong", n.Name(), "listen", err)
	}
	defer ln.Close()
	cl := &pingClient{out: make([]byte, p.MsgSize), in: make([]byte, p.MsgSize),
		warm: p.Warmup, lat: make([]time.Duration, p.PingPongs)}
	c, err := rtcDial(ctx, client, s.ServerAddr(port), cl)
	if err != nil {
		return res, opErr("pingpong", n.Name(), "dial", err)
	}
	lc := c.Lcore()
	// phase runs the client's round trips up to until on its lcore and
	// waits for them (or for the server's early end).
	phase := func(until int) error {
		ch := make(chan error, 1)
		if err := lc.Submit(func(*rt.Lcore) { cl.run(c, until, ch) }); err != nil {
			return err
		}
		select {
		case err := <-ch:
			return err
		case err := <-srv:
			return fmt.Errorf("server ended first: %w", errors.Join(err, io.ErrUnexpectedEOF))
		case <-ctx.Done():
			return ctx.Err()
		case <-lc.Done():
			return rt.ErrStopped
		}
	}
	if err := phase(p.Warmup); err != nil {
		return res, opErr("pingpong", n.Name(), "warm-up", err)
	}
	d0 := n.Drops()
	u := ReadUsage()
	if err := phase(p.Warmup + p.PingPongs); err != nil {
		return res, opErr("pingpong", n.Name(), "timed", err)
	}
	res.Timed = u.Since()
	res.Drops = n.Drops().Sub(d0)
	if err := lc.Submit(func(*rt.Lcore) { _ = c.Close() }); err != nil {
		return res, opErr("pingpong", n.Name(), "close", err)
	}
	if err, werr := await(ctx, srv, server.Lcores()[0]); werr != nil || err != nil {
		return res, opErr("pingpong", n.Name(), "server", errors.Join(err, werr))
	}
	res.Checked = int64(len(cl.lat))
	res.Metrics = pingPongMetrics(res.Timed, cl.lat)
	return res, nil
}

// pingClient is ping-pong's client on its lcore: one numbered request
// at a time, the next written as soon as the reply is checked.
type pingClient struct {
	out, in []byte
	got     int // bytes of the reply so far
	i       int // round trips done
	warm    int
	lat     []time.Duration
	t0      time.Time
	// until is where the running phase ends, at its channel (nil: no
	// phase running).
	until int
	at    chan error
}

// run starts a phase: round trips until i reaches until, then at gets
// nil (or the first error).
func (p *pingClient) run(c *rtc.Conn, until int, at chan error) {
	p.until, p.at = until, at
	if p.i >= until {
		p.end(nil)
		return
	}
	p.send(c)
}

func (p *pingClient) end(err error) {
	if p.at != nil {
		p.at <- err
		p.at = nil
	}
}

// send writes request i, the clock read just before.
func (p *pingClient) send(c *rtc.Conn) {
	i := uint64(p.i)
	binary.LittleEndian.PutUint64(p.out, i)
	p.out[len(p.out)-1] = byte(i)
	p.t0 = time.Now()
	if n, err := c.Write(p.out); n != len(p.out) {
		p.end(numberedErr("write request", i, errors.Join(err, io.ErrShortWrite)))
	}
}

// Receive implements rtc.Receiver: the reply's bytes, straight from the
// segment.
func (p *pingClient) Receive(_ *rtc.Conn, b []byte) int {
	k := copy(p.in[p.got:], b)
	p.got += k
	return k
}

// Readable implements rtc.Handler: once the reply is whole, check it,
// record the round trip and write the next request.
func (p *pingClient) Readable(c *rtc.Conn) {
	if p.at == nil {
		return
	}
	if p.got < len(p.in) {
		k, err := c.Read(p.in[p.got:])
		p.got += k
		if err != nil && !errors.Is(err, rtc.ErrWouldBlock) {
			p.end(numberedErr("read reply", uint64(p.i), err))
			return
		}
		if p.got < len(p.in) {
			return
		}
	}
	now := time.Now()
	i := uint64(p.i)
	if got := binary.LittleEndian.Uint64(p.in); got != i || p.in[len(p.in)-1] != byte(i) {
		p.end(mismatchErr(i, got))
		return
	}
	p.got = 0
	if p.i >= p.warm {
		p.lat[p.i-p.warm] = now.Sub(p.t0)
	}
	p.i++
	if p.i >= p.until {
		p.end(nil)
		return
	}
	p.send(c)
}

// Writable implements rtc.Handler: a 64-byte request always fits.
func (p *pingClient) Writable(*rtc.Conn) {}

// Closed implements rtc.Handler.
func (p *pingClient) Closed(_ *rtc.Conn, err error) {
	p.end(numberedErr("connection ended at round trip", uint64(p.i), errors.Join(err, io.ErrUnexpectedEOF)))
}

// echoServer answers every MsgSize-byte request with the same bytes
// until the peer closes: Echo, run to completion on the server's lcore.
type echoServer struct {
	buf      []byte
	got      int
	done     chan error
	reported bool
}

// Receive implements rtc.Receiver: the request's bytes, straight from
// the segment (a second request's stay in TCP's buffer for Read).
func (e *echoServer) Receive(_ *rtc.Conn, b []byte) int {
	k := copy(e.buf[e.got:], b)
	e.got += k
	return k
}

// Readable implements rtc.Handler.
func (e *echoServer) Readable(c *rtc.Conn) {
	for !e.reported {
		if e.got == len(e.buf) {
			if n, err := c.Write(e.buf); n != len(e.buf) {
				e.report(fmt.Errorf("write reply: %w", errors.Join(err, io.ErrShortWrite)))
				return
			}
			e.got = 0
		}
		k, err := c.Read(e.buf[e.got:])
		e.got += k
		switch {
		case errors.Is(err, rtc.ErrWouldBlock):
			return
		case errors.Is(err, io.EOF):
			if e.got != 0 {
				err = fmt.Errorf("EOF after %d bytes of a request: %w", e.got, io.ErrUnexpectedEOF)
			} else {
				err = nil
			}
			e.report(err)
			_ = c.Close()
			return
		case err != nil:
			e.report(err)
			return
		}
	}
}

// Writable implements rtc.Handler: a reply always fits.
func (e *echoServer) Writable(*rtc.Conn) {}

// Closed implements rtc.Handler.
func (e *echoServer) Closed(_ *rtc.Conn, err error) {
	e.report(fmt.Errorf("connection ended before EOF: %w", errors.Join(err, io.ErrUnexpectedEOF)))
}

func (e *echoServer) report(err error) {
	if !e.reported {
		e.reported = true
		e.done <- err
	}
}
