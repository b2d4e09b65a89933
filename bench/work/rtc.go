package work

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/savanna-sim/savanna/bench/netw"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/rtc"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// RTCNetwork is the network whose applications run to completion on
// the lcores (netw.SavannaRTC).
const RTCNetwork = "savanna-rtc"

// RTCNote says which workloads run on savanna-rtc, for the report.
const RTCNote = "savanna-rtc runs bulk and pingpong only, written as run-to-completion handlers on the lcores (stack/rtc) doing the same work as the net.Conn workloads (the same bytes, chunks, CRC-32C and numbered 64-byte messages); setup and many are left to the net.Conn networks"

// RTCWorkloads lists the workloads savanna-rtc runs, in report order.
func RTCWorkloads() []string { return []string{"bulk", "pingpong"} }

// For returns the workload to run on the named network: on savanna-rtc
// its run-to-completion form (RTCBulk, RTCPingPong), which it alone can
// run; elsewhere ByName's.
func For(network, workload string) (Workload, error) {
	if network != RTCNetwork {
		return ByName(workload)
	}
	switch workload {
	case "bulk":
		return RTCBulk, nil
	case "pingpong":
		return RTCPingPong, nil
	}
	if _, err := ByName(workload); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("work: %s on %s: %s", workload, network, RTCNote)
}

// rtcNet returns n as the savanna-rtc network.
func rtcNet(workload string, n netw.Network) (*netw.SavannaRTC, error) {
	s, ok := n.(*netw.SavannaRTC)
	if !ok {
		return nil, fmt.Errorf("%s (run to completion) on %s: needs the %s network", workload, n.Name(), RTCNetwork)
	}
	return s, nil
}

// await waits for ch, the context or lc's end.
func await[T any](ctx context.Context, ch <-chan T, lc *rt.Lcore) (T, error) {
	var zero T
	select {
	case v := <-ch:
		return v, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-lc.Done():
		return zero, rt.ErrStopped
	}
}

// rtcDial connects from r's dialling lcore to to, served by h, and
// returns the connection once its handshake completed.
func rtcDial(ctx context.Context, r *rt.Runtime, to tcp.Addr, h rtc.Handler) (*rtc.Conn, error) {
	type outcome struct {
		c   *rtc.Conn
		err error
	}
	ch := make(chan outcome, 1)
	lc := r.DialLcore()
	if err := lc.Submit(func(lc *rt.Lcore) {
		if _, err := rtc.Dial(lc, to, h, func(c *rtc.Conn, err error) { ch <- outcome{c, err} }); err != nil {
			ch <- outcome{nil, err}
		}
	}); err != nil {
		return nil, err
	}
	o, err := await(ctx, ch, lc)
	if err != nil {
		return nil, err
	}
	return o.c, o.err
}

// RTCBulk is Bulk on savanna-rtc: p.BulkBytes one way on one connection,
// written in 64 KiB chunks of the same pattern from a handler on the
// client's lcore (a chunk that does not fit goes on when Writable says
// there is room), received on the server's lcore by a handler that
// takes the bytes straight from the segments into its 256 KiB buffer
// (rtc.Receiver) and reads what TCP buffered, CRC-32C checked on both
// ends. The timed part runs from the first write to the receiver's EOF.
func RTCBulk(ctx context.Context, n netw.Network, p Params, port uint16) (Result, error) {
	res := Result{Workload: "bulk", Network: n.Name(), MTU: n.MTU(), Family: n.Family()}
	s, err := rtcNet("bulk", n)
	if err != nil {
		return res, err
	}
	client, server := s.Runtimes()
	tab := castagnoli()
	rcvd := make(chan bulkGot, 1)
	ln, err := rtc.Listen(server, port, 16, func(*rtc.Conn) rtc.Handler {
		return &bulkReceiver{buf: make([]byte, 256<<10), tab: tab, done: rcvd}
	})
	if err != nil {
		return res, opErr("bulk", n.Name(), "listen", err)
	}
	defer ln.Close()
	snd := &bulkSender{src: pattern(), total: p.BulkBytes, tab: tab, done: make(chan error, 1)}
	c, err := rtcDial(ctx, client, s.ServerAddr(port), snd)
	if err != nil {
		return res, opErr("bulk", n.Name(), "dial", err)
	}
	lc := c.Lcore()
	d0 := n.Drops()
	u := ReadUsage()
	if err := lc.Submit(func(*rt.Lcore) { snd.pump(c) }); err != nil {
		return res, opErr("bulk", n.Name(), "start", err)
	}
	// Either side may fail first; the run is over when both are done.
	var g bulkGot
	var sendErr error
	select {
	case sendErr = <-snd.done:
		if sendErr == nil {
			g, err = await(ctx, rcvd, server.Lcores()[0])
		}
	case g = <-rcvd:
		if g.err == nil {
			sendErr, err = await(ctx, snd.done, lc)
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return res, opErr("bulk", n.Name(), "waiting for the sender and the receiver", err)
	}
	if sendErr != nil {
		return res, opErr("bulk", n.Name(), "send", sendErr)
	}
	res.Timed = u.Since()
	res.Drops = n.Drops().Sub(d0)
	if g.err != nil {
		return res, opErr("bulk", n.Name(), fmt.Sprintf("read after %d bytes", g.n), g.err)
	}
	if g.n != p.BulkBytes || g.crc != snd.crc {
		return res, fmt.Errorf("bulk on %s: received %d bytes crc %08x; sent %d crc %08x", n.Name(), g.n, g.crc, p.BulkBytes, snd.crc)
	}
	res.Checked = g.n
	res.Metrics = bulkMetrics(res.Timed, p.BulkBytes)
	return res, nil
}

// bulkSender writes the bulk stream from the client's lcore.
type bulkSender struct {
	src   []byte
	total int64
	// sent counts the bytes of whole chunks written, part those of the
	// chunk being written.
	sent int64
	part int
	tab  *crc32.Table
	crc  uint32
	// done gets the sender's outcome once: nil when every byte is in
	// TCP's send buffer and the FIN queued.
	done     chan error
	finished bool
}

// pump writes until the send buffer is full or the stream is written
// (lcore only). Chunks are Bulk's: 64 KiB from the pattern at offset
// (bytes before the chunk) mod 251.
func (s *bulkSender) pump(c *rtc.Conn) {
	for s.sent < s.total && !s.finished {
		off := int(s.sent % 251)
		k := int(min(bulkChunk, s.total-s.sent))
		b := s.src[off+s.part : off+k]
		n, err := c.Write(b)
		s.crc = crc32.Update(s.crc, s.tab, b[:n])
		s.part += n
		if s.part == k {
			s.sent += int64(k)
			s.part = 0
			continue
		}
		if err != nil && !errors.Is(err, rtc.ErrWouldBlock) {
			s.finish(fmt.Errorf("write at byte %d: %w", s.sent+int64(s.part), err))
		}
		return // Writable follows
	}
	if !s.finished {
		s.finish(c.CloseWrite())
	}
}

func (s *bulkSender) finish(err error) {
	s.finished = true
	s.done <- err
}

// Writable implements rtc.Handler.
func (s *bulkSender) Writable(c *rtc.Conn) { s.pump(c) }

// Readable implements rtc.Handler: the receiver's FIN after it read the
// stream's end.
func (s *bulkSender) Readable(c *rtc.Conn) {
	var b [64]byte
	if _, err := c.Read(b[:]); errors.Is(err, io.EOF) {
		_ = c.Close()
	}
}

// Closed implements rtc.Handler.
func (s *bulkSender) Closed(_ *rtc.Conn, err error) {
	if !s.finished {
		s.finish(fmt.Errorf("connection ended: %w", errors.Join(err, io.ErrUnexpectedEOF)))
	}
}

// bulkGot is what the bulk receiver counted.
type bulkGot struct {
	n   int64
	crc uint32
	err error
}

// bulkReceiver takes the bulk stream on the server's lcore: every byte
// is copied once into buf (from the segment, or from TCP's receive
// buffer by Read) and its CRC-32C taken there, as Bulk's receiver reads
// into its buffer and sums it.
type bulkReceiver struct {
	buf      []byte
	fill     int
	tab      *crc32.Table
	got      bulkGot
	done     chan bulkGot
	reported bool
}

// Receive implements rtc.Receiver.
func (r *bulkReceiver) Receive(_ *rtc.Conn, p []byte) int {
	for q := p; len(q) > 0; {
		n := copy(r.buf[r.fill:], q)
		r.sum(n)
		q = q[n:]
	}
	return len(p)
}

// sum takes the n bytes just put at fill into the count and the CRC.
func (r *bulkReceiver) sum(n int) {
	r.got.crc = crc32.Update(r.got.crc, r.tab, r.buf[r.fill:r.fill+n])
	r.got.n += int64(n)
	r.fill += n
	if r.fill == len(r.buf) {
		r.fill = 0
	}
}

// Readable implements rtc.Handler: what TCP buffered (bytes that came
// while the receive buffer was not empty), then the end of the stream.
func (r *bulkReceiver) Readable(c *rtc.Conn) {
	for !r.reported {
		n, err := c.Read(r.buf[r.fill:])
		r.sum(n)
		switch {
		case errors.Is(err, rtc.ErrWouldBlock):
			return
		case errors.Is(err, io.EOF):
			r.report(nil)
			_ = c.Close()
			return
		case err != nil:
			r.report(err)
			return
		}
	}
}

// Writable implements rtc.Handler (the receiver writes nothing).
func (r *bulkReceiver) Writable(*rtc.Conn) {}

// Closed implements rtc.Handler.
func (r *bulkReceiver) Closed(_ *rtc.Conn, err error) {
	r.report(fmt.Errorf("connection ended before EOF: %w", errors.Join(err, io.ErrUnexpectedEOF)))
}

func (r *bulkReceiver) report(err error) {
	if r.reported {
		return
	}
	r.reported = true
	r.got.err = err
	r.done <- r.got
}
