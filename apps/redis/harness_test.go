package redis_test

import (
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/resp"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// host is one simulated machine: a port, a core and a stack instance.
type host struct {
	port *nic.Port
	core *sim.Core
	in   *lstack.Instance
}

// bed is a server host and a client host joined by a 10 us link.
type bed struct {
	eng    *sim.Engine
	server *host
	client *host
	store  *resp.Store
	// remote is the server's Redis address.
	remote tcp.Addr
}

// newHost builds a user-space host on 1024-entry rings and 8192 mbufs,
// with IPv4 and TCP checksums offloaded.
func newHost(eng *sim.Engine, id uint16, name, addr string) *host {
	h, err := simhost.NewHost(eng, simhost.HostConfig{
		NIC: simhost.NICConfig{Name: name, ID: id,
			TxOffloads: hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum,
			RxOffloads: hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum,
			RxRing:     1024, TxRing: 1024, Mbufs: 8192},
		Address: addr, TCP: tcp.DefaultConfig(), CPU: int(id),
	})
	Expect(err).NotTo(HaveOccurred())
	return &host{port: h.Port, core: h.Core, in: h.Instance}
}

// newBed builds the two hosts over a link with the given impairments.
func newBed(seed uint64, link nic.LinkConfig) *bed {
	eng := sim.NewEngine(seed)
	s := newHost(eng, 0, "server", "10.0.0.1/24")
	c := newHost(eng, 1, "client", "10.0.0.2/24")
	if link.Latency == 0 {
		link.Latency = 10 * time.Microsecond
	}
	_, err := nic.NewLink(eng, "wire", s.port, c.port, link)
	Expect(err).NotTo(HaveOccurred())
	return &bed{eng: eng, server: s, client: c, store: resp.NewStore(), remote: tcp.AddrFrom4([4]byte{10, 0, 0, 1}, 6379)}
}

// chunk is bytes a rawClient writes at a time after it connected, or
// its close when close is set.
type chunk struct {
	after time.Duration
	data  string
	close bool
}

// rawClient is a client app that writes chunks on a schedule and keeps
// every byte it reads, through an event set of its own.
type rawClient struct {
	set       *lstack.EventSet
	remote    tcp.Addr
	c         *tcp.Conn
	chunks    []chunk
	out       []byte
	got       []byte
	connected time.Duration
	evs       []tcp.Event
	eof       bool
}

func newRawClient(h *host, remote tcp.Addr, chunks ...chunk) *rawClient {
	r := &rawClient{set: h.in.NewEventSet(), remote: remote, chunks: chunks}
	h.core.Attach(r)
	return r
}

func (r *rawClient) Poll(m hw.Meter) (bool, time.Duration) {
	in := r.set.Instance()
	if r.c == nil {
		c, err := r.set.Connect(m, 0, r.remote, r)
		Expect(err).NotTo(HaveOccurred())
		r.c = c
		return true, hw.NoDeadline
	}
	worked := false
	r.evs = r.set.Events(r.evs[:0])
	for _, ev := range r.evs {
		Expect(ev.Data).To(BeIdenticalTo(r), "another app's event")
		worked = true
		if r.connected == 0 && ev.Conn.Connected() {
			r.connected = m.Now()
		}
		if ev.Mask&(tcp.EventReadable|tcp.EventHangup) != 0 {
			var err error
			r.got, r.eof, err = in.ReadAvailable(m, r.c, r.got)
			Expect(err).NotTo(HaveOccurred())
		}
	}
	next := hw.NoDeadline
	if r.connected > 0 {
		for len(r.chunks) > 0 {
			ch := r.chunks[0]
			if at := r.connected + ch.after; at > m.Now() {
				next = at
				break
			}
			r.chunks = r.chunks[1:]
			if ch.close {
				Expect(in.Close(m, r.c)).To(Succeed())
				continue
			}
			r.out = append(r.out, ch.data...)
		}
		if len(r.out) > 0 {
			rest, err := in.WriteAvailable(m, r.c, r.out)
			Expect(err).NotTo(HaveOccurred())
			r.out = append(r.out[:0], rest...)
			worked = true
		}
	}
	r.set.Wait(m, worked)
	return worked, next
}

// command is a command in RESP's array form.
func command(args ...string) string {
	var b [][]byte
	for _, a := range args {
		b = append(b, []byte(a))
	}
	return string(resp.AppendCommand(nil, b...))
}
