package ndp

import (
	"encoding/binary"
	"math/bits"
	"time"

	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// Message lengths of MLD (RFC 2710 section 3, RFC 3810 sections 5.1 and
// 5.2).
const (
	// MLDv1Len is an MLDv1 query, report or done: also how RFC 3810
	// section 8.1 tells an MLDv1 query from an MLDv2 one.
	MLDv1Len = 24
	// QueryV2Len is an MLDv2 query without sources.
	QueryV2Len = 28
	// ReportHeaderLen is an MLDv2 report's fixed part.
	ReportHeaderLen = 8
	// recordHeaderLen is a multicast address record without sources.
	recordHeaderLen = 20
)

// MLDHopLimit is the IP Hop Limit of every MLD message (RFC 3810 section
// 5, RFC 2710 section 3): 1, so that it never leaves the link.
const MLDHopLimit = 1

// RouterAlertHopByHop returns the 8-byte Hop-by-Hop Options header the
// caller's IPv6 layer puts between the IPv6 header (Next Header 0) and
// every MLD message (RFC 3810 section 5: "sent ... with an IPv6 Router
// Alert option in a Hop-by-Hop Options header"): Next Header next (58,
// ICMPv6), Hdr Ext Len 0, the Router Alert option (type 5, length 2,
// value 0 "Multicast Listener Discovery message", RFC 2711 section 2.1)
// and a PadN of two bytes (type 1, length 0) to fill the 8 octets.
func RouterAlertHopByHop(next uint8) [8]byte {
	return [8]byte{next, 0, 5, 2, 0, 0, 1, 0}
}

// RecordType is a multicast address record's type (RFC 3810 section
// 5.2.12).
type RecordType uint8

// Record types: current-state records answer queries, filter-mode-change
// records announce a join (to EXCLUDE) or leave (to INCLUDE).
const (
	ModeIsInclude   RecordType = 1
	ModeIsExclude   RecordType = 2
	ChangeToInclude RecordType = 3
	ChangeToExclude RecordType = 4
	AllowNewSources RecordType = 5
	BlockOldSources RecordType = 6
)

// Query is a parsed Multicast Listener Query, MLDv1 (RFC 2710 section 3)
// or MLDv2 (RFC 3810 section 5.1).
type Query struct {
	// Version is 1 or 2, by length (RFC 3810 section 8.1).
	Version int
	// MaxRespDelay is the time within which to answer (RFC 3810 section
	// 5.1.3: the Maximum Response Code decoded; MLDv1: milliseconds).
	MaxRespDelay time.Duration
	// Group is zero in a General Query.
	Group ipv6.Addr
	// MLDv2 only: the S flag, QRV, QQI (section 5.1.9: QQIC decoded)
	// and the sources of a Multicast Address and Source Specific Query.
	SuppressRouter bool
	QRV            uint8
	QQI            time.Duration
	Sources        []ipv6.Addr
}

// IsGeneral reports whether q asks about every group.
func (q *Query) IsGeneral() bool { return q.Group.IsUnspecified() }

// decodeExp decodes the floating-point form RFC 3810 uses for Maximum
// Response Code (section 5.1.3, 16 bits, 12 of mantissa) and QQIC
// (section 5.1.9, 8 bits, 4 of mantissa): below 1<<(width-1) the value is
// itself, above it 1|exp(3)|mant and the value is (mant|1<<m) << (exp+3).
func decodeExp(code uint32, width, mant int) uint64 {
	if code < 1<<(width-1) {
		return uint64(code)
	}
	exp := (code >> mant) & 7
	m := code & (1<<mant - 1)
	return uint64(m|1<<mant) << (exp + 3)
}

// encodeExp is decodeExp's inverse, saturating at the largest value.
func encodeExp(v uint64, width, mant int) uint32 {
	if v < 1<<(width-1) {
		return uint32(v)
	}
	exp := bits.Len64(v) - 1 - mant - 3
	if exp > 7 {
		return 1<<width - 1
	}
	return 1<<(width-1) | uint32(exp)<<mant | uint32(v>>(exp+3))&(1<<mant-1)
}

// ParseQuery parses an MLD query (type 130, from its type byte). The
// version is told by length (RFC 3810 section 8.1): 24 octets is MLDv1,
// 28 or more MLDv2, anything else is ErrQueryLength.
func ParseQuery(msg []byte) (Query, error) {
	var q Query
	if len(msg) < MLDv1Len {
		return q, ErrTruncated
	}
	if icmpv6.Header(msg).Type() != icmpv6.TypeMLDQuery {
		return q, ErrType
	}
	code := uint32(binary.BigEndian.Uint16(msg[4:6]))
	q.Group = ipv6.Addr(msg[8:24])
	switch {
	case len(msg) == MLDv1Len:
		q.Version = 1
		q.MaxRespDelay = time.Duration(code) * time.Millisecond
		return q, nil
	case len(msg) < QueryV2Len:
		return Query{}, ErrQueryLength
	}
	q.Version = 2
	q.MaxRespDelay = time.Duration(decodeExp(code, 16, 12)) * time.Millisecond
	q.SuppressRouter = msg[24]&0x08 != 0
	q.QRV = msg[24] & 0x07
	q.QQI = time.Duration(decodeExp(uint32(msg[25]), 8, 4)) * time.Second
	n := int(binary.BigEndian.Uint16(msg[26:28]))
	// Bytes after the sources are Additional Data, ignored (section
	// 5.1.12).
	if len(msg) < QueryV2Len+n*ipv6.AddrLen {
		return Query{}, ErrTruncated
	}
	if n > 0 {
		q.Sources = make([]ipv6.Addr, n)
		for i := range q.Sources {
			q.Sources[i] = ipv6.Addr(msg[QueryV2Len+i*ipv6.AddrLen:])
		}
	}
	return q, nil
}

// ValidateQuery parses msg and applies the checks of RFC 3810 section
// 6.2 on a received query: a link-local source, Hop Limit 1, a Router
// Alert option; and the checksum (RFC 4443 section 2.3). The Code is
// ignored, as section 5.1.1 says receivers must.
func ValidateQuery(ip IPInfo, msg []byte) (Query, error) {
	if len(msg) < icmpv6.HeaderLen {
		return Query{}, ErrTruncated
	}
	switch {
	case !icmpv6.VerifyChecksum(ip.Src, ip.Dst, msg):
		return Query{}, ErrChecksum
	case !ip.Src.IsLinkLocal():
		return Query{}, ErrSourceNotLinkLocal
	case ip.HopLimit != MLDHopLimit:
		return Query{}, ErrHopLimit
	case !ip.RouterAlert:
		return Query{}, ErrNoRouterAlert
	}
	return ParseQuery(msg)
}

// Len returns the message's length: MLDv1Len for version 1.
func (q *Query) Len() int {
	if q.Version == 1 {
		return MLDv1Len
	}
	return QueryV2Len + len(q.Sources)*ipv6.AddrLen
}

// Emit writes the query sent from src to dst into b (Len bytes), its
// checksum filled in. Only routers send queries; Emit exists for the
// specs and the fuzz round trip.
func (q *Query) Emit(b []byte, src, dst ipv6.Addr) {
	b = b[:q.Len()]
	clear(b)
	icmpv6.Header(b).SetType(icmpv6.TypeMLDQuery)
	ms := uint64(q.MaxRespDelay / time.Millisecond)
	copy(b[8:24], q.Group[:])
	if q.Version == 1 {
		binary.BigEndian.PutUint16(b[4:6], uint16(min(ms, 0xffff)))
	} else {
		binary.BigEndian.PutUint16(b[4:6], uint16(encodeExp(ms, 16, 12)))
		b[24] = q.QRV & 7
		if q.SuppressRouter {
			b[24] |= 0x08
		}
		b[25] = uint8(encodeExp(uint64(q.QQI/time.Second), 8, 4))
		binary.BigEndian.PutUint16(b[26:28], uint16(len(q.Sources)))
		for i, s := range q.Sources {
			copy(b[QueryV2Len+i*ipv6.AddrLen:], s[:])
		}
	}
	icmpv6.FillChecksum(src, dst, b)
}

// AddressRecord is one multicast address record of an MLDv2 report (RFC
// 3810 section 5.2.4). Auxiliary data is skipped on parse (section
// 5.2.10: MLDv2 defines none) and never sent.
type AddressRecord struct {
	Type    RecordType
	Group   ipv6.Addr
	Sources []ipv6.Addr
}

// Report is a parsed Version 2 Multicast Listener Report (RFC 3810
// section 5.2).
type Report struct {
	Records []AddressRecord
}

// ParseReport parses an MLDv2 report (type 143, from its type byte).
// Hosts never act on other hosts' reports (RFC 3810 section 6: no report
// suppression in MLDv2); the parser is here for the specs, the fuzz
// targets and a future querier.
func ParseReport(msg []byte) (Report, error) {
	var r Report
	if len(msg) < ReportHeaderLen {
		return r, ErrTruncated
	}
	if icmpv6.Header(msg).Type() != icmpv6.TypeMLDv2Report {
		return r, ErrType
	}
	n := int(binary.BigEndian.Uint16(msg[6:8]))
	b := msg[ReportHeaderLen:]
	// Each record needs 20 bytes: refuse a count the message cannot
	// hold before allocating for it.
	if n*recordHeaderLen > len(b) {
		return Report{}, ErrTruncated
	}
	r.Records = make([]AddressRecord, n)
	for i := range r.Records {
		if len(b) < recordHeaderLen {
			return Report{}, ErrTruncated
		}
		ns := int(binary.BigEndian.Uint16(b[2:4]))
		size := recordHeaderLen + ns*ipv6.AddrLen + int(b[1])*4
		if size > len(b) {
			return Report{}, ErrTruncated
		}
		rec := AddressRecord{Type: RecordType(b[0]), Group: ipv6.Addr(b[4:20])}
		if ns > 0 {
			rec.Sources = make([]ipv6.Addr, ns)
			for j := range rec.Sources {
				rec.Sources[j] = ipv6.Addr(b[recordHeaderLen+j*ipv6.AddrLen:])
			}
		}
		r.Records[i] = rec
		b = b[size:]
	}
	return r, nil
}

// recordLen is rec's length in a report.
func recordLen(rec *AddressRecord) int { return recordHeaderLen + len(rec.Sources)*ipv6.AddrLen }

// Len returns the report's length in bytes.
func (r *Report) Len() int {
	n := ReportHeaderLen
	for i := range r.Records {
		n += recordLen(&r.Records[i])
	}
	return n
}

// Emit writes the report sent from src to dst into b (Len bytes), its
// checksum filled in.
func (r *Report) Emit(b []byte, src, dst ipv6.Addr) {
	b = b[:r.Len()]
	clear(b[:ReportHeaderLen])
	icmpv6.Header(b).SetType(icmpv6.TypeMLDv2Report)
	binary.BigEndian.PutUint16(b[6:8], uint16(len(r.Records)))
	p := b[ReportHeaderLen:]
	for i := range r.Records {
		rec := &r.Records[i]
		p[0], p[1] = uint8(rec.Type), 0
		binary.BigEndian.PutUint16(p[2:4], uint16(len(rec.Sources)))
		copy(p[4:20], rec.Group[:])
		for j, s := range rec.Sources {
			copy(p[recordHeaderLen+j*ipv6.AddrLen:], s[:])
		}
		p = p[recordLen(rec):]
	}
	icmpv6.FillChecksum(src, dst, b)
}

// emitV1 writes an MLDv1 report or done for group (RFC 2710 section 3),
// sent in MLDv1 compatibility mode (RFC 3810 section 8.2.1).
func emitV1(b []byte, t icmpv6.Type, group, src, dst ipv6.Addr) []byte {
	b = b[:MLDv1Len]
	clear(b)
	icmpv6.Header(b).SetType(t)
	copy(b[8:24], group[:])
	icmpv6.FillChecksum(src, dst, b)
	return b
}
