package tcp

// Dual-stack listeners (RFC 4038 section 4.2; RFC 3493 section 5.3's
// IPV6_V6ONLY): an IPv6 listener that is not V6ONLY also takes IPv4
// connections to its port, as Linux's AF_INET6 sockets do by default
// (net.ipv6.bindv6only = 0, Documentation/networking/ip-sysctl.rst;
// compute_score in net/ipv4/inet_hashtables.c skips only the
// ipv6_only_sock listeners for an IPv4 SYN).
//
// The connection such a listener accepts is an IPv4 connection: its
// segments go out over IPv4 and Conn.LocalAddr and Conn.RemoteAddr give
// IPv4 addresses (10.0.0.2), not their IPv4-mapped form (::ffff:10.0.0.2)
// that Linux hands an AF_INET6 socket's accept. TCP keys its connections
// by tcp.IP, where the mapped form is an IPv6 address (RFC 4291 section
// 2.5.5.2 reserves it for the API, never the wire): keeping the IPv4
// form keeps the connection's 4-tuple the one its segments carry and its
// output on the IPv4 path, and it is what Go's net package reports for a
// dual-stack listener too (netip.Addr.Unmap); an application that wants
// Linux's form has Addr.IP.As16.

// SetV6Only sets IPV6_V6ONLY (RFC 3493 section 5.3): true, the listener
// takes IPv6 segments only; false (the default, Linux's
// net.ipv6.bindv6only = 0), an IPv6 listener also takes IPv4 segments
// to its port (on the IPv6 wildcard, to any local IPv4 address; on an
// IPv4-mapped address ::ffff:a.b.c.d, to a.b.c.d). It changes nothing on
// an IPv4 listener. Linux takes the option before bind only; here it may
// change at any time and applies to SYNs from then on.
func (l *Listener) SetV6Only(v6only bool) { l.v6only = v6only }

// V6Only reports IPV6_V6ONLY.
func (l *Listener) V6Only() bool { return l.v6only }

// dualStackListener returns the IPv6 listener that is not V6ONLY and
// takes an IPv4 segment to addr:port: one on addr's IPv4-mapped address,
// else one on the IPv6 wildcard. Listeners of the IPv4 family come
// first (lookupListener): where Linux would refuse the second bind of
// 0.0.0.0:p and [::]:p without V6ONLY (EADDRINUSE), both are allowed
// here and the more specific family wins, so that a stack listening on
// both keeps the IPv4 segments on the IPv4 listener.
func (s *Stack) dualStackListener(addr IP, port uint16) *Listener {
	if len(s.listeners) == 0 {
		return nil
	}
	if l, ok := s.listeners[listenKey{IPFrom16(addr.As16()), port}]; ok && !l.v6only {
		return l
	}
	if l, ok := s.listeners[listenKey{IP{v6: true}, port}]; ok && !l.v6only {
		return l
	}
	return nil
}
