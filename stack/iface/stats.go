package iface

import (
	"reflect"

	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// Stats are every counter of the interface, by layer.
type Stats struct {
	Eth  EthStats   `json:"eth"`
	ARP  arp.Stats  `json:"arp"`
	IP   ipv4.Stats `json:"ip"`
	ICMP icmp.Stats `json:"icmp"`
	UDP  UDPStats   `json:"udp"`
	TCP  TCPStats   `json:"tcp"`
	Tx   TxStats    `json:"tx"`
}

// EthStats count frames at the Ethernet layer.
type EthStats struct {
	RxFrames uint64 `json:"rx_frames"`
	RxBytes  uint64 `json:"rx_bytes"`
	// Drops by reason.
	RxTruncated        uint64 `json:"rx_truncated"`
	RxStackedVLAN      uint64 `json:"rx_stacked_vlan"`
	RxLengthField      uint64 `json:"rx_length_field"`
	RxVLAN             uint64 `json:"rx_vlan"`
	RxOtherHost        uint64 `json:"rx_other_host"` // unicast to another MAC
	RxMulticast        uint64 `json:"rx_multicast"`  // group address other than broadcast
	RxUnknownEtherType uint64 `json:"rx_unknown_ether_type"`
	RxChained          uint64 `json:"rx_chained"`    // multi-segment mbufs
	RxBadSource        uint64 `json:"rx_bad_source"` // group or zero source MAC
}

func (s *EthStats) countError(err error) {
	e, _ := err.(ether.Error)
	switch e {
	case ether.ErrTruncated:
		s.RxTruncated++
	case ether.ErrStackedVLAN:
		s.RxStackedVLAN++
	default:
		s.RxLengthField++
	}
}

// UDPStats are the Udp: counters of `netstat -s` (RFC 4113) plus reasons.
type UDPStats struct {
	InDatagrams uint64 `json:"in_datagrams"` // delivered to a socket
	NoPorts     uint64 `json:"no_ports"`     // to a closed port
	// InErrors: dropped for any reason below or a full receive queue.
	InErrors      uint64 `json:"in_errors"`
	InCsumErrors  uint64 `json:"in_csum_errors"`
	InTruncated   uint64 `json:"in_truncated"`
	InBadLength   uint64 `json:"in_bad_length"`
	RcvbufErrors  uint64 `json:"rcvbuf_errors"`   // receive queue full
	IgnoredMulti  uint64 `json:"ignored_multi"`   // broadcast to a closed port
	InCsumOffload uint64 `json:"in_csum_offload"` // checksums the NIC verified
	InCopied      uint64 `json:"in_copied"`       // reassembled datagrams copied into a socket
	InICMPErrors  uint64 `json:"in_icmp_errors"`  // ICMP errors quoting our datagrams
	OutDatagrams  uint64 `json:"out_datagrams"`
	SndbufErrors  uint64 `json:"sndbuf_errors"` // send failed (no mbuf, no route, too big)
}

// TCPStats count what the interface does for TCP; the TCP engine keeps
// its own counters.
type TCPStats struct {
	InSegs         uint64 `json:"in_segs"`          // handed to the handler
	InCsumErrors   uint64 `json:"in_csum_errors"`   // dropped before the handler
	InCsumOffload  uint64 `json:"in_csum_offload"`  // checksums the NIC verified
	InICMPErrors   uint64 `json:"in_icmp_errors"`   // ICMP errors handed to the handler
	OutSegs        uint64 `json:"out_segs"`         // OutputIPv4 calls with proto 6
	OutCsumOffload uint64 `json:"out_csum_offload"` // checksums left to the NIC
}

// TxStats count frames leaving and output failures by reason.
type TxStats struct {
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
	// Padded: frames padded to the 60-byte Ethernet minimum.
	Padded uint64 `json:"padded"`
	// IPChecksumOffload: IPv4 header checksums left to the NIC.
	IPChecksumOffload uint64 `json:"ip_checksum_offload"`
	// Failures by reason.
	NoMbuf     uint64 `json:"no_mbuf"`
	NoHeadroom uint64 `json:"no_headroom"`
	Chained    uint64 `json:"chained"`
	BadAddress uint64 `json:"bad_address"`
	// ARPNoMbuf: ARP packets not sent for lack of an mbuf.
	ARPNoMbuf uint64 `json:"arp_no_mbuf"`
}

// ResetStats starts a new measurement window, as the end of a warm-up
// does. The rule: counters go to zero, gauges keep their value and peaks
// restart from their gauge; every figure of Stats (Ethernet, ARP, IPv4
// and its reassembly, ICMP, UDP, TCP, transmit) and of the UDP sockets'
// Stats is a counter, so all of them go to zero. What the interface
// holds (ARP entries and the packets waiting for them, datagrams being
// reassembled, datagrams queued on sockets, the ICMP rate limiter's
// tokens) is state, not statistics, and is left alone.
func (i *Interface) ResetStats() {
	// Assigned in place: the reassembler counts into &i.stats.IP.
	i.stats = Stats{}
	// The ARP cache (stack/arp) has no reset of its own; the interface
	// reports its counters relative to what they are now.
	i.arpBase = i.arp.Stats()
	for _, s := range i.udp {
		s.stats = UDPSocketStats{}
	}
	if i.v6 != nil {
		i.v6.resetStats()
	}
}

// countersSince returns now minus base, field by field, for a struct of
// uint64 counters (arp.Stats holds nothing else). It walks the fields
// rather than naming them so that a counter added to the struct is
// reset too; a field of another kind is not a counter and is reported as
// it is now.
func countersSince[T any](now, base T) T {
	n, b := reflect.ValueOf(&now).Elem(), reflect.ValueOf(base)
	for k := 0; k < n.NumField(); k++ {
		if f := n.Field(k); f.Kind() == reflect.Uint64 && f.CanSet() {
			f.SetUint(f.Uint() - b.Field(k).Uint())
		}
	}
	return now
}
