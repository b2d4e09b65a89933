package tcp

import "iter"

// connTable is the stack's connections by 4-tuple. IPv4 connections,
// nearly all of a million-connection run, are keyed by a 12-byte tuple
// (two 4-byte addresses, two ports) rather than the 38-byte fourTuple
// that IPv6 needs, so that a table slot is 24 bytes and not 48: the map
// costs half as much per connection, and hashing and comparing a key
// touch a third of the bytes. Every other tuple (IPv6, or a family mix,
// which no segment carries) goes to a table of fourTuple.
//
// The table of fourTuple remembers its last hit (last, lastConn): a run
// of segments of one IPv6 connection (bulk, ping-pong) then costs one
// 38-byte comparison instead of hashing and probing a 38-byte key, the
// cost the 12-byte IPv4 table does not have (4.4BSD's tcp_input kept
// the same one-entry cache, tcp_last_inpcb). put and remove, the only
// writers, keep it true: lastConn is nil or other[last].
type connTable struct {
	v4       map[v4Tuple]*Conn
	other    map[fourTuple]*Conn
	last     fourTuple
	lastConn *Conn
}

// v4Tuple is an IPv4 fourTuple.
type v4Tuple struct {
	localAddr, remoteAddr [4]byte
	localPort, remotePort uint16
}

func newConnTable() connTable {
	return connTable{v4: make(map[v4Tuple]*Conn), other: make(map[fourTuple]*Conn)}
}

// v4Key returns t's 12-byte key, and false when t is not IPv4.
func (t fourTuple) v4Key() (v4Tuple, bool) {
	if !t.localAddr.Is4() || !t.remoteAddr.Is4() {
		return v4Tuple{}, false
	}
	return v4Tuple{t.localAddr.As4(), t.remoteAddr.As4(), t.localPort, t.remotePort}, true
}

// get returns the connection of id.
func (ct *connTable) get(id fourTuple) (*Conn, bool) {
	if k, ok := id.v4Key(); ok {
		c, found := ct.v4[k]
		return c, found
	}
	if ct.lastConn != nil && id == ct.last {
		return ct.lastConn, true
	}
	c, found := ct.other[id]
	if found {
		ct.last, ct.lastConn = id, c
	}
	return c, found
}

// put makes c the connection of id.
func (ct *connTable) put(id fourTuple, c *Conn) {
	if k, ok := id.v4Key(); ok {
		ct.v4[k] = c
		return
	}
	ct.other[id] = c
	if id == ct.last {
		ct.lastConn = c
	}
}

// remove forgets the connection of id.
func (ct *connTable) remove(id fourTuple) {
	if k, ok := id.v4Key(); ok {
		delete(ct.v4, k)
		return
	}
	delete(ct.other, id)
	if id == ct.last {
		ct.lastConn = nil
	}
}

// len is the number of connections.
func (ct *connTable) len() int { return len(ct.v4) + len(ct.other) }

// all yields every connection, in no particular order (as ranging over
// a map does): callers that need an order sort.
func (ct *connTable) all() iter.Seq[*Conn] {
	return func(yield func(*Conn) bool) {
		for _, c := range ct.v4 {
			if !yield(c) {
				return
			}
		}
		for _, c := range ct.other {
			if !yield(c) {
				return
			}
		}
	}
}
