package ndp

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// Option types of RFC 4861 section 4.6.
const (
	OptSourceLinkAddr   uint8 = 1 // section 4.6.1
	OptTargetLinkAddr   uint8 = 2 // section 4.6.1
	OptPrefixInfo       uint8 = 3 // section 4.6.2
	OptRedirectedHeader uint8 = 4 // section 4.6.3
	OptMTU              uint8 = 5 // section 4.6.4
)

// Option lengths in bytes for the types this package reads.
const (
	linkAddrOptLen   = 8  // RFC 2464 section 6: type, length 1, six octets
	prefixInfoOptLen = 32 // RFC 4861 section 4.6.2: length 4
	mtuOptLen        = 8  // RFC 4861 section 4.6.4: length 1
)

// Infinite is the lifetime value that means "forever" in prefix
// information options (RFC 4861 section 4.6.2, all ones).
const Infinite uint32 = math.MaxUint32

// Option is a zero-copy view of one option: type, length in units of 8
// octets, and its data (RFC 4861 section 4.6). Accessors assume at least
// 2 bytes.
type Option []byte

// Type returns the option type.
func (o Option) Type() uint8 { return o[0] }

// Len returns the option's length in bytes (its length field times 8).
func (o Option) Len() int { return int(o[1]) * 8 }

// PrefixInfo is a prefix information option (RFC 4861 section 4.6.2).
type PrefixInfo struct {
	PrefixLen uint8
	// OnLink is the L flag: the prefix can be used for on-link
	// determination.
	OnLink bool
	// Autonomous is the A flag: the prefix can be used for stateless
	// address autoconfiguration (RFC 4862).
	Autonomous bool
	// ValidLifetime and PreferredLifetime are in seconds; Infinite is
	// forever.
	ValidLifetime     uint32
	PreferredLifetime uint32
	Prefix            ipv6.Addr
}

// Options are the options of an ND message this package understands.
// Unrecognised options are skipped, as RFC 4861 section 4.6 requires
// ("Receivers MUST silently ignore any options they do not recognize and
// continue processing the message"), and counted in Unknown. When an
// option that should appear once appears more, the first one counts.
type Options struct {
	SourceLinkAddr    ether.Addr
	HasSourceLinkAddr bool
	TargetLinkAddr    ether.Addr
	HasTargetLinkAddr bool
	// MTU is the MTU option's value (RFC 4861 section 4.6.4).
	MTU    uint32
	HasMTU bool
	// Prefixes are the prefix information options, in order.
	Prefixes []PrefixInfo
	// Redirected reports a redirected header option (section 4.6.3),
	// which is skipped: Redirects are not acted on (see Redirect).
	Redirected bool
	// Unknown counts the options skipped because their type is unknown.
	Unknown int
}

// parseOptions parses the options area b of an ND message into o.
func parseOptions(b []byte, o *Options) error {
	for len(b) > 0 {
		if len(b) < 2 {
			return ErrTruncated
		}
		opt := Option(b)
		n := opt.Len()
		if n == 0 {
			return ErrOptionLength
		}
		if n > len(b) {
			return ErrTruncated
		}
		opt = opt[:n]
		switch opt.Type() {
		case OptSourceLinkAddr, OptTargetLinkAddr:
			if n != linkAddrOptLen {
				return ErrBadOption
			}
			mac := ether.Addr(opt[2:8])
			if opt.Type() == OptSourceLinkAddr && !o.HasSourceLinkAddr {
				o.SourceLinkAddr, o.HasSourceLinkAddr = mac, true
			} else if opt.Type() == OptTargetLinkAddr && !o.HasTargetLinkAddr {
				o.TargetLinkAddr, o.HasTargetLinkAddr = mac, true
			}
		case OptPrefixInfo:
			if n != prefixInfoOptLen {
				return ErrBadOption
			}
			o.Prefixes = append(o.Prefixes, PrefixInfo{
				PrefixLen:         opt[2],
				OnLink:            opt[3]&0x80 != 0,
				Autonomous:        opt[3]&0x40 != 0,
				ValidLifetime:     binary.BigEndian.Uint32(opt[4:8]),
				PreferredLifetime: binary.BigEndian.Uint32(opt[8:12]),
				Prefix:            ipv6.Addr(opt[16:32]),
			})
		case OptMTU:
			if n != mtuOptLen {
				return ErrBadOption
			}
			if !o.HasMTU {
				o.MTU, o.HasMTU = binary.BigEndian.Uint32(opt[4:8]), true
			}
		case OptRedirectedHeader:
			o.Redirected = true
		default:
			o.Unknown++
		}
		b = b[n:]
	}
	return nil
}

// len returns the bytes Emit writes for o (unknown and redirected
// options are not emitted).
func (o *Options) len() int {
	n := 0
	if o.HasSourceLinkAddr {
		n += linkAddrOptLen
	}
	if o.HasTargetLinkAddr {
		n += linkAddrOptLen
	}
	if o.HasMTU {
		n += mtuOptLen
	}
	return n + len(o.Prefixes)*prefixInfoOptLen
}

// emit writes o into b, which must hold o.len() bytes.
func (o *Options) emit(b []byte) {
	put := func(t uint8, n int) []byte {
		opt := b[:n]
		clear(opt)
		opt[0], opt[1] = t, uint8(n/8)
		b = b[n:]
		return opt
	}
	if o.HasSourceLinkAddr {
		copy(put(OptSourceLinkAddr, linkAddrOptLen)[2:], o.SourceLinkAddr[:])
	}
	if o.HasTargetLinkAddr {
		copy(put(OptTargetLinkAddr, linkAddrOptLen)[2:], o.TargetLinkAddr[:])
	}
	if o.HasMTU {
		binary.BigEndian.PutUint32(put(OptMTU, mtuOptLen)[4:], o.MTU)
	}
	for _, p := range o.Prefixes {
		opt := put(OptPrefixInfo, prefixInfoOptLen)
		opt[2] = p.PrefixLen
		if p.OnLink {
			opt[3] |= 0x80
		}
		if p.Autonomous {
			opt[3] |= 0x40
		}
		binary.BigEndian.PutUint32(opt[4:8], p.ValidLifetime)
		binary.BigEndian.PutUint32(opt[8:12], p.PreferredLifetime)
		copy(opt[16:32], p.Prefix[:])
	}
}

// lifetime converts a lifetime in seconds to a duration, Infinite to
// Never.
func lifetime(s uint32) time.Duration {
	if s == Infinite {
		return Never
	}
	return time.Duration(s) * time.Second
}
