package ndp_test

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

type nopSink struct{}

func (nopSink) SendICMPv6(time.Duration, ndp.Output)            {}
func (nopSink) SendPending(time.Duration, *hw.Mbuf, ether.Addr) {}
func (nopSink) DropPending(*hw.Mbuf)                            {}
func (nopSink) AddressUnreachable(time.Duration, *hw.Mbuf)      {}
func (nopSink) Notify(time.Duration, ndp.Event)                 {}

// fuzzNode is a node with a static address, so that fuzzed messages can
// reach every handler.
func fuzzNode(f *testing.F) *ndp.Node {
	cfg := ndp.DefaultConfig()
	cfg.MaxNeighbors, cfg.MaxAddresses, cfg.MaxGroups = 8, 8, 16
	n, err := ndp.NewNode(cfg, macUs, rand.NewPCG(1, 2))
	if err != nil {
		f.Fatal(err)
	}
	if err := n.Start(0, nopSink{}); err != nil {
		f.Fatal(err)
	}
	if err := n.AddStatic(0, gUs, 64, nopSink{}); err != nil {
		f.Fatal(err)
	}
	return n
}

// fuzzIP picks the packet's addresses from sel, so that the rules on
// them (link-local source, ::, multicast destination) are all reached.
func fuzzIP(sel byte, hop uint8) ndp.IPInfo {
	srcs := []ipv6.Addr{llPeer, llRouter, {}, gPeer}
	dsts := []ipv6.Addr{llUs, ipv6.AllNodes(), llUs.SolicitedNode(), gUs}
	return ndp.IPInfo{Src: srcs[sel&3], Dst: dsts[(sel>>2)&3], HopLimit: hop, RouterAlert: sel&0x10 != 0}
}

// normal clears what Parse records but Emit does not write.
func normal(o *ndp.Options) {
	o.Unknown, o.Redirected = 0, false
}

// roundTrip checks that what parsed emits and parses to the same thing.
func roundTrip[R any](t *testing.T, r R, parse func([]byte) (R, error), emit func(*R, []byte), size func(*R) int) {
	b := make([]byte, size(&r))
	emit(&r, b)
	back, err := parse(b)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip: %+v vs %+v (%v)", back, r, err)
	}
}

// FuzzND feeds random ND messages (the first byte picks the type) to
// every parser, checks the round trip, and gives them, checksum fixed,
// to a node.
func FuzzND(f *testing.F) {
	f.Add(byte(0), emitNS(ndp.NeighborSolicit{Target: gUs, Options: slla(macPeer)}, llPeer, gUs.SolicitedNode()))
	f.Add(byte(0), emitNA(ndp.NeighborAdvert{Solicited: true, Override: true, Target: llPeer, Options: tlla(macPeer)}, llPeer, llUs))
	f.Add(byte(1), emitRA(slaacPrefix(7200, 3600), llRouter, ipv6.AllNodes()))
	f.Add(byte(1), emitRA(ndp.RouterAdvert{RouterLifetime: 1800, Options: ndp.Options{MTU: 1400, HasMTU: true}}, llRouter, ipv6.AllNodes()))
	f.Add(byte(0), []byte{133, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 2})
	f.Add(byte(0), []byte{137, 0, 0, 0})
	n := fuzzNode(f)
	var now time.Duration
	f.Fuzz(func(t *testing.T, sel byte, b []byte) {
		if rs, err := ndp.ParseRouterSolicit(b); err == nil {
			normal(&rs.Options)
			roundTrip(t, rs, ndp.ParseRouterSolicit, func(r *ndp.RouterSolicit, b []byte) { r.Emit(b, llPeer, llUs) }, (*ndp.RouterSolicit).Len)
		}
		if ra, err := ndp.ParseRouterAdvert(b); err == nil {
			normal(&ra.Options)
			roundTrip(t, ra, ndp.ParseRouterAdvert, func(r *ndp.RouterAdvert, b []byte) { r.Emit(b, llPeer, llUs) }, (*ndp.RouterAdvert).Len)
		}
		if ns, err := ndp.ParseNeighborSolicit(b); err == nil {
			normal(&ns.Options)
			roundTrip(t, ns, ndp.ParseNeighborSolicit, func(r *ndp.NeighborSolicit, b []byte) { r.Emit(b, llPeer, llUs) }, (*ndp.NeighborSolicit).Len)
		}
		if na, err := ndp.ParseNeighborAdvert(b); err == nil {
			normal(&na.Options)
			roundTrip(t, na, ndp.ParseNeighborAdvert, func(r *ndp.NeighborAdvert, b []byte) { r.Emit(b, llPeer, llUs) }, (*ndp.NeighborAdvert).Len)
		}
		if rd, err := ndp.ParseRedirect(b); err == nil {
			normal(&rd.Options)
			roundTrip(t, rd, ndp.ParseRedirect, func(r *ndp.Redirect, b []byte) { r.Emit(b, llPeer, llUs) }, (*ndp.Redirect).Len)
		}
		if len(b) < icmpv6.HeaderLen {
			n.Input(now, fuzzIP(sel, ndp.HopLimit), b, nopSink{})
			return
		}
		msg := append([]byte(nil), b...)
		msg[0] = 133 + sel%5
		ip := fuzzIP(sel>>3, ndp.HopLimit)
		icmpv6.FillChecksum(ip.Src, ip.Dst, msg)
		now += 100 * time.Millisecond
		n.Input(now, ip, msg, nopSink{})
		n.Resolve(now, ndp.NeighborMsg(append(msg, make([]byte, 24)...)).Target(), &hw.Mbuf{}, nopSink{})
		n.Poll(now, nopSink{})
	})
}

// FuzzOptions feeds random option areas to the option parser, through a
// Neighbor Solicitation's.
func FuzzOptions(f *testing.F) {
	f.Add([]byte{1, 1, 2, 0, 0, 0, 0, 2})
	f.Add([]byte{3, 4, 64, 0xc0, 0, 0, 0x1c, 0x20, 0, 0, 0x0e, 0x10, 0, 0, 0, 0, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{5, 1, 0, 0, 0, 0, 5, 0x78})
	f.Add([]byte{200, 0})
	f.Add([]byte{4, 1, 0, 0, 0, 0, 0, 0, 2, 1, 2, 0, 0, 0, 0, 3})
	head := emitNS(ndp.NeighborSolicit{Target: gUs}, llPeer, llUs)
	f.Fuzz(func(t *testing.T, opts []byte) {
		ns, err := ndp.ParseNeighborSolicit(append(append([]byte(nil), head...), opts...))
		if err != nil {
			if _, ok := err.(ndp.Error); !ok {
				t.Fatalf("error of another kind: %v", err)
			}
			return
		}
		normal(&ns.Options)
		roundTrip(t, ns, ndp.ParseNeighborSolicit, func(r *ndp.NeighborSolicit, b []byte) { r.Emit(b, llPeer, llUs) }, (*ndp.NeighborSolicit).Len)
	})
}

// FuzzQuery feeds random MLD queries to the parser and, checksum fixed,
// to a node.
func FuzzQuery(f *testing.F) {
	f.Add(emitQuery(ndp.Query{Version: 1, MaxRespDelay: time.Second}, llRouter, ipv6.AllNodes()))
	f.Add(emitQuery(ndp.Query{Version: 2, MaxRespDelay: 10 * time.Second, QRV: 2, QQI: 125 * time.Second}, llRouter, ipv6.AllNodes()))
	f.Add(emitQuery(ndp.Query{Version: 2, MaxRespDelay: time.Minute, Group: llUs.SolicitedNode(), Sources: []ipv6.Addr{gPeer}}, llRouter, ipv6.AllNodes()))
	n := fuzzNode(f)
	var now time.Duration
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := ndp.ParseQuery(b); err == nil {
			back, err := ndp.ParseQuery(emitQuery(q, llRouter, ipv6.AllNodes()))
			if q.Version == 2 && q.MaxRespDelay > time.Duration(0x1fff<<10)*time.Millisecond {
				t.Fatalf("max response delay %v beyond the code's range", q.MaxRespDelay)
			}
			if err != nil || !reflect.DeepEqual(back, q) {
				t.Fatalf("round trip: %+v vs %+v (%v)", back, q, err)
			}
		}
		if len(b) < icmpv6.HeaderLen {
			return
		}
		msg := append([]byte(nil), b...)
		msg[0] = uint8(icmpv6.TypeMLDQuery)
		ip := ndp.IPInfo{Src: llRouter, Dst: ipv6.AllNodes(), HopLimit: 1, RouterAlert: true}
		icmpv6.FillChecksum(ip.Src, ip.Dst, msg)
		now += 100 * time.Millisecond
		n.Input(now, ip, msg, nopSink{})
		n.Poll(now, nopSink{})
	})
}

// FuzzReport feeds random MLDv2 reports to the parser.
func FuzzReport(f *testing.F) {
	r := ndp.Report{Records: []ndp.AddressRecord{{Type: ndp.ChangeToExclude, Group: llUs.SolicitedNode()}, {Type: ndp.ModeIsInclude, Group: ipv6.AllRouters(), Sources: []ipv6.Addr{gPeer}}}}
	b := make([]byte, r.Len())
	r.Emit(b, llUs, ipv6.AllMLDv2Routers())
	f.Add(b)
	f.Add([]byte{143, 0, 0, 0, 0, 0, 0xff, 0xff})
	f.Add([]byte{143, 0, 0, 0, 0, 0, 0, 1, 2, 1, 0, 0, 0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ndp.ParseReport(b)
		if err != nil {
			return
		}
		out := make([]byte, r.Len())
		r.Emit(out, llUs, ipv6.AllMLDv2Routers())
		back, err := ndp.ParseReport(out)
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Fatalf("round trip: %+v vs %+v (%v)", back, r, err)
		}
	})
}
