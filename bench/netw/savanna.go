package netw

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/stack/gonet"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/ndp"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// savannaAddrs are the two Savanna stacks' addresses at one family: the
// client's and the server's with their prefix lengths, and the server's
// as Dial's address.
type savannaAddrs struct {
	client, server string
	serverIP       net.IP
}

func savannaAddrsOf(family int) savannaAddrs {
	if family == 6 {
		return savannaAddrs{client: "fd00::1/64", server: "fd00::2/64", serverIP: net.ParseIP("fd00::2")}
	}
	return savannaAddrs{client: "10.9.0.1/24", server: "10.9.0.2/24", serverIP: net.IPv4(10, 9, 0, 2).To4()}
}

// savannaND is Neighbor Discovery's configuration on the IPv6 network:
// RFC 4861's defaults but for Duplicate Address Detection's wait (one
// solicitation, as RFC 4862's default DupAddrDetectTransmits, answered
// within RetransTimer 50 ms rather than 1 s) and no router solicitations
// (the ring link has no router), so that the addresses are usable within
// about 50 ms of Start. Neighbours are still resolved by solicitation and
// advertisement, and their cache entries age as the RFC says.
func savannaND(mtu int) ndp.Config {
	nd := ndp.DefaultConfig()
	nd.RetransTimer = 50 * time.Millisecond
	nd.MaxRtrSolicitationDelay = 0
	nd.MaxRtrSolicitations = 0
	nd.LinkMTU = mtu
	return nd
}

// savannaReady bounds the wait for Duplicate Address Detection and the
// warm-up connection of an IPv6 network.
const savannaReady = 10 * time.Second

// savannaWarmPort is the port of the warm-up connection, outside the
// bench's range (20000 and up) and the specs' (7000s, 31000s).
const savannaWarmPort = 9

// SavannaSizing is how the Savanna network is sized: TCP socket buffers
// of gVisor's default size (1 MiB each way, so that both user-space
// stacks run with the same buffers), descriptor rings deep enough to
// absorb one segment from each of the many workload's 10k connections at
// once (the receiving lcore shares two CPUs with 20k application
// goroutines, and a shallower ring overflows), and a mempool twice the
// ring. The pool's memory is mapped outside the Go heap and only the
// mbufs in use are ever touched (hw/ringdev), so its size costs no
// resident memory until it is used.
type SavannaSizing struct {
	Ring       int `json:"ring"`
	PoolSize   int `json:"pool_mbufs"`
	DataRoom   int `json:"data_room"`
	MaxConns   int `json:"max_conns"`
	SendBuffer int `json:"send_buffer"`
	RecvBuffer int `json:"recv_buffer"`
	// Spin is how long an idle lcore polls before it parks. 5 µs, not
	// stack/rt's default 50 µs: with GOMAXPROCS=2 a long spin keeps both
	// lcores runnable, the scheduler spreads the four goroutines of a
	// ping-pong over both Ps and every hand-off becomes a cross-CPU
	// wake-up (p50 15 µs); parking soon lets a kick hand the CPU straight
	// to the lcore (p50 4 µs, and fewer CPU-seconds for bulk and setup).
	Spin time.Duration `json:"spin_ns"`
	// ChecksumOffload: the ring link offers IPv4 and TCP checksum
	// offload and the stacks use it (ringdev.Config.ChecksumOffload), as
	// the kernel's loopback does; the gVisor network's channel endpoints
	// advertise the same (LinkChecksumOffload), so both user-space stacks
	// skip the same work. At IPv6 it is the TCP checksum alone (IPv6
	// has no header checksum, RFC 8200 section 8.1).
	ChecksumOffload bool `json:"checksum_offload"`
	// CopyBreak is both ports' rx copybreak (ringdev.Config.RxCopyBreak):
	// frames of at most this many bytes are copied into a small mbuf on
	// arrival and the sender's full-size mbuf is freed at once, as Linux
	// drivers do for short frames (rx_copybreak, 256 in e1000e). When the
	// many workload's 10k requests wait in a ring at once they then hold
	// 10k small mbufs (384-byte rooms) rather than 10k data rooms of
	// DataRoom bytes, each touching its own page: 25–40 MiB of resident
	// memory at the peak. Larger frames pass by pointer as before.
	CopyBreak int `json:"copybreak"`
}

// SizingFor returns the sizing used at mtu.
func SizingFor(mtu int) SavannaSizing {
	const buf = 1 << 20
	room := 2048 + hw.DefaultHeadroom
	if mtu+14+hw.DefaultHeadroom > room {
		room = (mtu + 14 + hw.DefaultHeadroom + 1023) &^ 1023
	}
	const ring = 16384
	// TIME-WAIT connections count against MaxConns; the setup workload
	// leaves 20k of them behind on the client.
	return SavannaSizing{Ring: ring, PoolSize: 2 * ring, DataRoom: room, MaxConns: 100_000,
		SendBuffer: buf, RecvBuffer: buf, Spin: 5 * time.Microsecond, ChecksumOffload: LinkChecksumOffload,
		CopyBreak: 256}
}

// Savanna is two Savanna stacks in one process, each on its own
// real-time lcore (stack/rt), joined by a ringdev pair (the net_ring
// PMD's Go form) of the set MTU. Applications use them through
// stack/gonet.
type Savanna struct {
	mtu    int
	family int
	addrs  savannaAddrs
	size   SavannaSizing
	pa, pb *ringdev.Port
	pools  [2]*ringdev.Mempool
	a, b   *rt.Runtime
}

// NewSavanna makes and starts the pair at mtu speaking family (4 or 6).
// At IPv6 it returns once both stacks' addresses passed Duplicate
// Address Detection and one warm-up connection has resolved each side's
// neighbour by Neighbor Discovery, so that no timed part pays for either.
func NewSavanna(mtu, family int) (*Savanna, error) {
	if family == 0 {
		family = 4
	}
	sz := SizingFor(mtu)
	pa, pb, err := ringdev.NewPair(ringdev.Config{Name: "client", MTU: mtu, ChecksumOffload: sz.ChecksumOffload, RxCopyBreak: sz.CopyBreak},
		ringdev.Config{Name: "server", MTU: mtu, ChecksumOffload: sz.ChecksumOffload, RxCopyBreak: sz.CopyBreak})
	if err != nil {
		return nil, fmt.Errorf("savanna: %w", err)
	}
	s := &Savanna{mtu: mtu, family: family, addrs: savannaAddrsOf(family), size: sz, pa: pa, pb: pb}
	mk := func(i int, p *ringdev.Port, addr string) (*rt.Runtime, error) {
		pool, err := ringdev.NewMempool(p.Name()+".pool", sz.PoolSize, sz.DataRoom)
		if err != nil {
			return nil, err
		}
		s.pools[i] = pool
		cfg := rt.Config{Lcores: 1, Seed: uint64(i + 1), RxRing: sz.Ring, TxRing: sz.Ring, NoLockOSThread: true, Spin: sz.Spin}
		tc := tcp.DefaultConfig()
		tc.MTU, tc.MaxConns = mtu, sz.MaxConns
		tc.SendBuffer, tc.RecvBuffer = sz.SendBuffer, sz.RecvBuffer
		ic := iface.Config{Address: addr, MTU: mtu}
		if family == 6 {
			ic = iface.Config{MTU: mtu, IPv6: iface.IPv6Config{Address: addr, ND: savannaND(mtu), NDSet: true}}
		}
		sc := lstack.Config{Iface: ic, TCP: tc}
		if sz.ChecksumOffload {
			sc.TxOffloads = hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum
		}
		r, err := rt.New(cfg, sc, p, pool)
		if err != nil {
			return nil, fmt.Errorf("savanna %s: %w", addr, err)
		}
		return r, nil
	}
	// Both ports are started (rt.New) before either lcore runs, so the
	// gratuitous ARPs of Start find a link that is up.
	if s.a, err = mk(0, pa, s.addrs.client); err != nil {
		return nil, err
	}
	if s.b, err = mk(1, pb, s.addrs.server); err != nil {
		return nil, err
	}
	for _, r := range []*rt.Runtime{s.a, s.b} {
		if err := r.Start(); err != nil {
			s.a.Stop()
			s.b.Stop()
			return nil, fmt.Errorf("savanna: %w", err)
		}
	}
	if family == 6 {
		if err := s.ready6(); err != nil {
			s.Close()
			return nil, fmt.Errorf("savanna ipv6: %w", err)
		}
	}
	return s, nil
}

// ready6 waits for Duplicate Address Detection on both stacks, then
// opens and closes one connection so that each side's neighbour cache
// holds the other: the client resolves the server by solicitation and
// advertisement (RFC 4861 section 7.2), the server makes its entry for
// the client from that solicitation (section 7.2.3), and the
// connection's ACKs confirm both (section 7.3.1).
func (s *Savanna) ready6() error {
	end := time.Now().Add(savannaReady)
	for !assigned6(s.a) || !assigned6(s.b) {
		if time.Now().After(end) {
			return fmt.Errorf("duplicate address detection unfinished after %v: client %v, server %v", savannaReady, s.a.Addrs6(), s.b.Addrs6())
		}
		time.Sleep(2 * time.Millisecond)
	}
	ln, err := s.Listen(savannaWarmPort)
	if err != nil {
		return fmt.Errorf("warm-up listen: %w", err)
	}
	defer ln.Close()
	accepted := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	c, err := s.Dial(ctx, savannaWarmPort)
	if err != nil {
		return fmt.Errorf("warm-up dial: %w", err)
	}
	c.Close()
	if err := <-accepted; err != nil {
		return fmt.Errorf("warm-up accept: %w", err)
	}
	return nil
}

// assigned6 reports whether every IPv6 address of r passed Duplicate
// Address Detection.
func assigned6(r *rt.Runtime) bool {
	as := r.Addrs6()
	for _, a := range as {
		if a.State != "preferred" && a.State != "deprecated" {
			return false
		}
	}
	return len(as) > 0
}

// Name implements Network.
func (s *Savanna) Name() string { return "savanna" }

// Family implements Network.
func (s *Savanna) Family() int { return s.family }

// MTU implements Network.
func (s *Savanna) MTU() int { return s.mtu }

// Sizing returns the rings and pools in use.
func (s *Savanna) Sizing() SavannaSizing { return s.size }

// Listen implements Network.
func (s *Savanna) Listen(port uint16) (net.Listener, error) {
	return gonet.ListenOptions(s.b, port, 4096, gonet.Options{})
}

// Dial implements Network.
func (s *Savanna) Dial(ctx context.Context, port uint16) (net.Conn, error) {
	// An address, not a string to parse, as gVisor's gonet.DialContextTCP
	// takes a tcpip.FullAddress.
	return gonet.DialTCP(ctx, s.a, &net.TCPAddr{IP: s.addrs.serverIP, Port: int(port)})
}

// Runtimes returns the client and server runtimes.
func (s *Savanna) Runtimes() (client, server *rt.Runtime) { return s.a, s.b }

// Drops implements Network: the ports' imissed (full rx ring) and
// oerrors (oversize or link down), the pools' failed gets, and each
// stack's refused transmissions, failed allocations and dropped
// segments.
func (s *Savanna) Drops() Drops {
	m, info := detail{}, detail{}
	var d Drops
	for i, r := range []*rt.Runtime{s.a, s.b} {
		side := [2]string{"client", "server"}[i]
		snap := r.Snapshot()
		d.Link += snap.Port.IMissed + snap.Port.OErrors + snap.Port.IErrors
		m.add(side+".port.imissed", snap.Port.IMissed)
		m.add(side+".port.oerrors", snap.Port.OErrors)
		m.add(side+".port.ierrors", snap.Port.IErrors)
		m.add(side+".pool.failed_gets", snap.Pool.FailedGets)
		copies, fallbacks := [2]*ringdev.Port{s.pa, s.pb}[i].CopyBreakStats()
		info.add(side+".port.rx_copybreak_packets", copies)
		info.add(side+".port.rx_copybreak_fallbacks", fallbacks)
		d.Stack += snap.Pool.FailedGets
		for _, lc := range snap.Lcores {
			t := lc.TCP
			d.Retransmits += t.RetransSegs
			m.add(side+".tcp.retrans_segs", t.RetransSegs)
			m.add(side+".tcp.rto_timeouts", t.RtoTimeouts)
			info.add(side+".tcp.zero_window_probes", t.ZeroWindowProbes)
			info.add(side+".tcp.delayed_acks", t.DelayedAcks)
			info.add(side+".tcp.out_segs", t.OutSegs)
			info.add(side+".tcp.in_segs", t.InSegs)
			info.add(side+".driver.parks", lc.Driver.Parks)
			info.add(side+".driver.wakeups", lc.Driver.Wakeups)
			m.add(side+".tcp.listen_drops", t.ListenDrops)
			m.add(side+".tcp.conn_limit_refused", t.ConnLimitRefused)
			m.add(side+".stack.tx_ring_full", lc.Stack.TxRingFull)
			m.add(side+".stack.no_mbuf", lc.Stack.NoMbuf)
			d.Stack += lc.Stack.TxRingFull + t.Drops.RecvBufferFull + t.Drops.OfoLimit + t.Drops.Output +
				t.Drops.SynQueueFull + t.Drops.AcceptQueueFull + t.Drops.Checksum + t.Drops.Malformed
			m.add(side+".tcp.drops.recv_buffer_full", t.Drops.RecvBufferFull)
			m.add(side+".tcp.drops.ofo_limit", t.Drops.OfoLimit)
			m.add(side+".tcp.drops.output", t.Drops.Output)
			m.add(side+".tcp.drops.syn_queue_full", t.Drops.SynQueueFull)
			m.add(side+".tcp.drops.accept_queue_full", t.Drops.AcceptQueueFull)
			m.add(side+".tcp.drops.checksum", t.Drops.Checksum)
			m.add(side+".tcp.drops.malformed", t.Drops.Malformed)
			m.add(side+".tcp.drops.out_of_window", t.Drops.OutOfWindow)
			m.add(side+".tcp.drops.no_socket", t.Drops.NoSocket)
			m.add(side+".iface.tx.no_mbuf", lc.Iface.Tx.NoMbuf)
			d.Stack += lc.Iface.Tx.NoMbuf
			if s6 := lc.Iface6; s6 != nil {
				// IPv6's losses: output refused for want of an mbuf,
				// a source, a route or a resolved neighbour, and input
				// dropped (RFC 4293's ipSystemStats for IPv6).
				o, in := s6.Out, s6.IPv6
				d.Stack += o.Discards + o.NoSource + o.NoRoutes + o.AddressUnreachable + o.TooBig +
					in.InHdrErrors + in.InAddrErrors + in.InTruncatedPkts + in.InDiscards
				m.add(side+".ipv6.out.discards", o.Discards)
				m.add(side+".ipv6.out.no_source", o.NoSource)
				m.add(side+".ipv6.out.no_routes", o.NoRoutes)
				m.add(side+".ipv6.out.address_unreachable", o.AddressUnreachable)
				m.add(side+".ipv6.out.too_big", o.TooBig)
				m.add(side+".ipv6.in_hdr_errors", in.InHdrErrors)
				m.add(side+".ipv6.in_addr_errors", in.InAddrErrors)
				m.add(side+".ipv6.in_truncated_pkts", in.InTruncatedPkts)
				m.add(side+".ipv6.in_discards", in.InDiscards)
				m.add(side+".ndp.resolutions_failed", s6.NDP.ResolutionsFailed)
				m.add(side+".ndp.nud_failed", s6.NDP.NUDFailed)
				m.add(side+".ndp.pending_drop_dest_full", s6.NDP.PendingDropDestFull)
				m.add(side+".ndp.pending_drop_total_full", s6.NDP.PendingDropTotalFull)
				info.add(side+".ndp.tx_neighbor_solicits", s6.NDP.TxNeighborSolicits)
				info.add(side+".ndp.tx_probes", s6.NDP.TxProbes)
				info.add(side+".ndp.tx_neighbor_adverts", s6.NDP.TxNeighborAdverts)
				info.add(side+".ndp.to_stale", s6.NDP.ToStale)
				info.add(side+".ndp.pending_queued", s6.NDP.PendingQueued)
				info.add(side+".ipv6.in_receives", in.InReceives)
				info.add(side+".ipv6.out.requests", o.Requests)
			}
		}
	}
	d.Detail, d.Counters = m.list(), info.list()
	return d
}

// Close implements Network.
func (s *Savanna) Close() error {
	s.a.Stop()
	s.b.Stop()
	return nil
}
