package netw

import (
	"context"
	"fmt"
	"net"
	"sync"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/link/channel"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// GVisorQueue is the depth of each channel endpoint's outbound queue,
// the same as the Savanna link's rings at MTU 1500.
const GVisorQueue = 4096

// LinkChecksumOffload says whether the in-memory links of both user-space
// networks offer checksum offload (Linux's loopback never computes or
// verifies a checksum either): Savanna's ring ports
// (ringdev.Config.ChecksumOffload) and gVisor's channel endpoints
// (CapabilityTXChecksumOffload|CapabilityRXChecksumOffload) alike, so the
// comparison stays fair.
const LinkChecksumOffload = true

const gvisorNIC tcpip.NICID = 1

// gvisorFamily is one address family's addresses and protocol: the
// same addresses as the Savanna network's.
type gvisorFamily struct {
	client, server tcpip.Address
	prefix         int
	proto          tcpip.NetworkProtocolNumber
	factory        stack.NetworkProtocolFactory
}

func gvisorFamilyOf(family int) gvisorFamily {
	if family == 6 {
		// ipv6.NewProtocol's zero Options: no Duplicate Address
		// Detection, no SLAAC, no router solicitations; the channel
		// endpoints need no link-layer resolution (no
		// CapabilityResolutionRequired), so Neighbor Discovery never runs,
		// as ARP never runs at IPv4.
		return gvisorFamily{client: tcpip.AddrFrom16([16]byte{0: 0xfd, 15: 1}), server: tcpip.AddrFrom16([16]byte{0: 0xfd, 15: 2}),
			prefix: 64, proto: ipv6.ProtocolNumber, factory: ipv6.NewProtocol}
	}
	return gvisorFamily{client: tcpip.AddrFrom4([4]byte{10, 9, 0, 1}), server: tcpip.AddrFrom4([4]byte{10, 9, 0, 2}),
		prefix: 24, proto: ipv4.ProtocolNumber, factory: ipv4.NewProtocol}
}

// GVisor is two gVisor netstack stacks joined by channel endpoints, one
// pump goroutine per direction moving packets from one endpoint's
// outbound queue into the other's inbound path, with gVisor's gonet
// adapters for net.Conn. SACK is on; everything else is netstack's
// default.
type GVisor struct {
	mtu    int
	fam    gvisorFamily
	family int
	cs, ss *stack.Stack
	ce, se *channel.Endpoint
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newGVisorStack(fam gvisorFamily, addr tcpip.Address, ep *channel.Endpoint) (*stack.Stack, error) {
	s := stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{fam.factory},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol},
	})
	sack := tcpip.TCPSACKEnabled(true)
	if err := s.SetTransportProtocolOption(tcp.ProtocolNumber, &sack); err != nil {
		return nil, fmt.Errorf("gvisor: SACK: %s", err)
	}
	if err := s.CreateNIC(gvisorNIC, ep); err != nil {
		return nil, fmt.Errorf("gvisor: create NIC: %s", err)
	}
	pa := tcpip.ProtocolAddress{Protocol: fam.proto, AddressWithPrefix: tcpip.AddressWithPrefix{Address: addr, PrefixLen: fam.prefix}}
	if err := s.AddProtocolAddress(gvisorNIC, pa, stack.AddressProperties{}); err != nil {
		return nil, fmt.Errorf("gvisor: address: %s", err)
	}
	s.SetRouteTable([]tcpip.Route{{Destination: pa.AddressWithPrefix.Subnet(), NIC: gvisorNIC}})
	return s, nil
}

// NewGVisor makes the pair at mtu speaking family (4 or 6) and starts
// the pumps.
func NewGVisor(mtu, family int) (*GVisor, error) {
	if family == 0 {
		family = 4
	}
	g := &GVisor{mtu: mtu, fam: gvisorFamilyOf(family), family: family}
	g.ce = channel.New(GVisorQueue, uint32(mtu), "")
	g.se = channel.New(GVisorQueue, uint32(mtu), "")
	if LinkChecksumOffload {
		for _, ep := range []*channel.Endpoint{g.ce, g.se} {
			ep.LinkEPCapabilities |= stack.CapabilityTXChecksumOffload | stack.CapabilityRXChecksumOffload
		}
	}
	var err error
	if g.cs, err = newGVisorStack(g.fam, g.fam.client, g.ce); err != nil {
		return nil, err
	}
	if g.ss, err = newGVisorStack(g.fam, g.fam.server, g.se); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	g.wg.Add(2)
	go g.pump(ctx, g.ce, g.se)
	go g.pump(ctx, g.se, g.ce)
	return g, nil
}

// pump moves every packet the from endpoint's stack sends into the to
// endpoint's stack, as a wire would.
func (g *GVisor) pump(ctx context.Context, from, to *channel.Endpoint) {
	defer g.wg.Done()
	for {
		pkt := from.ReadContext(ctx)
		if pkt == nil {
			return
		}
		in := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: pkt.ToBuffer()})
		pkt.DecRef()
		to.InjectInbound(g.fam.proto, in)
		in.DecRef()
	}
}

// Name implements Network.
func (g *GVisor) Name() string { return "gvisor" }

// MTU implements Network.
func (g *GVisor) MTU() int { return g.mtu }

// Family implements Network.
func (g *GVisor) Family() int { return g.family }

// Listen implements Network.
func (g *GVisor) Listen(port uint16) (net.Listener, error) {
	return gonet.ListenTCP(g.ss, tcpip.FullAddress{NIC: gvisorNIC, Addr: g.fam.server, Port: port}, g.fam.proto)
}

// Dial implements Network.
func (g *GVisor) Dial(ctx context.Context, port uint16) (net.Conn, error) {
	return gonet.DialContextTCP(ctx, g.cs, tcpip.FullAddress{NIC: gvisorNIC, Addr: g.fam.server, Port: port}, g.fam.proto)
}

// Drops implements Network: packets a full channel queue refused (the
// NIC's tx_packets_dropped_no_buffer_space), packets the stacks dropped,
// and TCP retransmissions.
func (g *GVisor) Drops() Drops {
	m := detail{}
	var d Drops
	for i, s := range []*stack.Stack{g.cs, g.ss} {
		side := [2]string{"client", "server"}[i]
		st := s.Stats()
		nb := st.NICs.TxPacketsDroppedNoBufferSpace.Value()
		d.Link += nb
		m.add(side+".nic.tx_dropped_no_buffer_space", nb)
		dp := st.DroppedPackets.Value()
		d.Stack += dp
		m.add(side+".dropped_packets", dp)
		m.add(side+".ip.malformed", st.IP.MalformedPacketsReceived.Value())
		m.add(side+".tcp.listen_overflow_syn_drop", st.TCP.ListenOverflowSynDrop.Value())
		m.add(side+".tcp.listen_overflow_ack_drop", st.TCP.ListenOverflowAckDrop.Value())
		d.Stack += st.TCP.ListenOverflowSynDrop.Value() + st.TCP.ListenOverflowAckDrop.Value()
		m.add(side+".tcp.segment_send_errors", st.TCP.SegmentSendErrors.Value())
		d.Stack += st.TCP.SegmentSendErrors.Value()
		m.add(side+".tcp.timeouts", st.TCP.Timeouts.Value())
		r := st.TCP.Retransmits.Value()
		d.Retransmits += r
		m.add(side+".tcp.retransmits", r)
		m.add(side+".tcp.fast_retransmit", st.TCP.FastRetransmit.Value())
	}
	d.Detail = m.list()
	return d
}

// Close implements Network.
func (g *GVisor) Close() error {
	g.cancel()
	g.wg.Wait()
	g.cs.Close()
	g.ss.Close()
	g.ce.Close()
	g.se.Close()
	g.cs.Wait()
	g.ss.Wait()
	return nil
}
