package oltp

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The MySQL client/server protocol, the part a benchmark's statements use
// (MySQL Internals, "Client/Server Protocol": packets, COM_QUERY, the
// text result set, OK, ERR and EOF packets). Connection set-up (the
// handshake and authentication) is left out: benchmarksql connects once,
// before the measured phase.

// HeaderLen is a packet header's length: a 3-byte little-endian payload
// length and a 1-byte sequence id.
const HeaderLen = 4

// MaxPayload is the largest payload of one packet (2^24 - 1); a larger
// message is split over several packets, which this code does not need
// and refuses.
const MaxPayload = 1<<24 - 1

// Commands (the first byte of a client packet's payload).
const (
	ComQuit  = 0x01
	ComQuery = 0x03
	ComPing  = 0x0e
)

// First bytes of response packets.
const (
	respOK  = 0x00
	respEOF = 0xfe
	respERR = 0xff
)

// Server status flags of OK and EOF packets.
const (
	statusInTrans    = 0x0001
	statusAutocommit = 0x0002
)

// Column type of the synthetic result sets: MYSQL_TYPE_VAR_STRING.
const typeVarString = 0xfd

// Errors of the parsers.
var (
	// ErrIncomplete says the buffer holds only part of a packet or of a
	// response: read more and try again.
	ErrIncomplete = errors.New("oltp: incomplete packet")
	// ErrMalformed says the bytes are not what the protocol allows.
	ErrMalformed = errors.New("oltp: malformed packet")
)

// Packet is a zero-copy view of one packet: header and payload.
type Packet []byte

// ParsePacket returns the packet at the start of b and its length on the
// wire. A short buffer is ErrIncomplete.
func ParsePacket(b []byte) (Packet, int, error) {
	if len(b) < HeaderLen {
		return nil, 0, ErrIncomplete
	}
	n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	if n == MaxPayload {
		return nil, 0, fmt.Errorf("%w: payload of %d bytes continues in another packet (not supported)", ErrMalformed, n)
	}
	if len(b) < HeaderLen+n {
		return nil, 0, ErrIncomplete
	}
	return Packet(b[:HeaderLen+n]), HeaderLen + n, nil
}

// Seq returns the packet's sequence id.
func (p Packet) Seq() uint8 { return p[3] }

// Payload returns the packet's payload.
func (p Packet) Payload() []byte { return p[HeaderLen:] }

// AppendPacket appends a packet carrying payload to dst.
func AppendPacket(dst []byte, seq uint8, payload []byte) []byte {
	n := len(payload)
	dst = append(dst, byte(n), byte(n>>8), byte(n>>16), seq)
	return append(dst, payload...)
}

// beginPacket appends a header with a zero length and returns the offset
// of the header, for endPacket to fill in once the payload is appended.
func beginPacket(dst []byte, seq uint8) ([]byte, int) {
	return append(dst, 0, 0, 0, seq), len(dst)
}

func endPacket(dst []byte, at int) []byte {
	n := len(dst) - at - HeaderLen
	dst[at], dst[at+1], dst[at+2] = byte(n), byte(n>>8), byte(n>>16)
	return dst
}

// AppendQuery appends a COM_QUERY packet (sequence id 0: a command starts
// a new exchange) carrying sql.
func AppendQuery(dst []byte, sql []byte) []byte {
	dst, at := beginPacket(dst, 0)
	dst = append(dst, ComQuery)
	dst = append(dst, sql...)
	return endPacket(dst, at)
}

// Command is a parsed client command.
type Command struct {
	// Code is the command byte (ComQuery ...).
	Code byte
	// Arg is the rest of the payload: a COM_QUERY's SQL text. It aliases
	// the packet.
	Arg []byte
}

// ParseCommand parses a client packet's payload.
func ParseCommand(p Packet) (Command, error) {
	pl := p.Payload()
	if len(pl) == 0 {
		return Command{}, fmt.Errorf("%w: empty command packet", ErrMalformed)
	}
	return Command{Code: pl[0], Arg: pl[1:]}, nil
}

// AppendLenEnc appends a length-encoded integer.
func AppendLenEnc(dst []byte, v uint64) []byte {
	switch {
	case v < 251:
		return append(dst, byte(v))
	case v < 1<<16:
		return append(dst, 0xfc, byte(v), byte(v>>8))
	case v < 1<<24:
		return append(dst, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	}
	dst = append(dst, 0xfe)
	return binary.LittleEndian.AppendUint64(dst, v)
}

// ParseLenEnc parses a length-encoded integer and returns it and its
// length. 0xfb (NULL in a row) and 0xff are not integers.
func ParseLenEnc(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("%w: length-encoded integer missing", ErrMalformed)
	}
	switch c := b[0]; {
	case c < 0xfb:
		return uint64(c), 1, nil
	case c == 0xfc && len(b) >= 3:
		return uint64(b[1]) | uint64(b[2])<<8, 3, nil
	case c == 0xfd && len(b) >= 4:
		return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, 4, nil
	case c == 0xfe && len(b) >= 9:
		return binary.LittleEndian.Uint64(b[1:9]), 9, nil
	}
	return 0, 0, fmt.Errorf("%w: bad length-encoded integer 0x%02x", ErrMalformed, b[0])
}

func appendLenEncString(dst []byte, s string) []byte {
	dst = AppendLenEnc(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendOK appends an OK packet (protocol 4.1: header, affected rows,
// last insert id, status flags, warnings).
func AppendOK(dst []byte, seq uint8, affected, insertID uint64, status uint16) []byte {
	dst, at := beginPacket(dst, seq)
	dst = append(dst, respOK)
	dst = AppendLenEnc(dst, affected)
	dst = AppendLenEnc(dst, insertID)
	dst = binary.LittleEndian.AppendUint16(dst, status)
	dst = binary.LittleEndian.AppendUint16(dst, 0)
	return endPacket(dst, at)
}

// AppendError appends an ERR packet with a SQL state.
func AppendError(dst []byte, seq uint8, code uint16, state, msg string) []byte {
	dst, at := beginPacket(dst, seq)
	dst = append(dst, respERR)
	dst = binary.LittleEndian.AppendUint16(dst, code)
	dst = append(dst, '#')
	dst = append(dst, (state + "     ")[:5]...)
	dst = append(dst, msg...)
	return endPacket(dst, at)
}

func appendEOF(dst []byte, seq uint8, status uint16) []byte {
	dst, at := beginPacket(dst, seq)
	dst = append(dst, respEOF, 0, 0)
	dst = binary.LittleEndian.AppendUint16(dst, status)
	return endPacket(dst, at)
}

// AppendResultSet appends a text result set: the column count, one
// column definition per column, an EOF, the rows (each value a
// length-encoded string) and a closing EOF (the classic protocol, without
// CLIENT_DEPRECATE_EOF). seq is the first packet's sequence id; the
// returned seq is the next one.
func AppendResultSet(dst []byte, seq uint8, table string, columns []string, rows [][]string, status uint16) ([]byte, uint8) {
	dst, at := beginPacket(dst, seq)
	dst = AppendLenEnc(dst, uint64(len(columns)))
	dst = endPacket(dst, at)
	seq++
	for _, c := range columns {
		dst, at = beginPacket(dst, seq)
		dst = appendLenEncString(dst, "def")
		dst = appendLenEncString(dst, "tpcc")
		dst = appendLenEncString(dst, table)
		dst = appendLenEncString(dst, table)
		dst = appendLenEncString(dst, c)
		dst = appendLenEncString(dst, c)
		dst = append(dst, 0x0c)
		dst = binary.LittleEndian.AppendUint16(dst, 33) // utf8_general_ci
		dst = binary.LittleEndian.AppendUint32(dst, 255)
		dst = append(dst, typeVarString, 0, 0, 0, 0, 0)
		dst = endPacket(dst, at)
		seq++
	}
	dst = appendEOF(dst, seq, status)
	seq++
	for _, r := range rows {
		dst, at = beginPacket(dst, seq)
		for _, v := range r {
			dst = appendLenEncString(dst, v)
		}
		dst = endPacket(dst, at)
		seq++
	}
	dst = appendEOF(dst, seq, status)
	return dst, seq + 1
}

// ResponseKind says what a response was.
type ResponseKind uint8

// Response kinds.
const (
	ResponseOK ResponseKind = iota + 1
	ResponseError
	ResponseResultSet
)

// Response is a parsed server response.
type Response struct {
	Kind ResponseKind
	// Columns and Rows count a result set's columns and rows.
	Columns, Rows int
	// ErrorCode is an ERR packet's code.
	ErrorCode uint16
}

// isEOF reports whether p is an EOF packet (0xfe and shorter than 9
// bytes, which tells it from a row starting with an 8-byte length).
func isEOF(p Packet) bool {
	pl := p.Payload()
	return len(pl) > 0 && len(pl) < 9 && pl[0] == respEOF
}
