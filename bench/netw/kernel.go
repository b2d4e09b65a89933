package netw

import (
	"bufio"
	"context"

	"net"
	"os"
	"strconv"
	"strings"
)

// Kernel is Go's net package over the kernel's loopback interface, at
// 127.0.0.1 ("tcp4") or ::1 ("tcp6"). The kernel keeps no per-process
// loss counters, so Drops reads the host-wide ones (the loopback
// interface's dropped frames, TCP's RetransSegs, IPv6's discards): an
// upper bound when other programs run.
type Kernel struct {
	family int
}

// NewKernel returns the loopback network of family (4 or 6).
func NewKernel(family int) (*Kernel, error) {
	if family == 0 {
		family = 4
	}
	return &Kernel{family: family}, nil
}

// Family implements Network.
func (k *Kernel) Family() int { return k.family }

// Network is the net package's network name: "tcp4" or "tcp6".
func (k *Kernel) Network() string {
	if k.family == 6 {
		return "tcp6"
	}
	return "tcp4"
}

// HostPort is the loopback address of the family with port, "[::1]:80"
// for IPv6.
func (k *Kernel) HostPort(port uint16) string {
	host := "127.0.0.1"
	if k.family == 6 {
		host = "::1"
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// Name implements Network.
func (k *Kernel) Name() string { return "kernel" }

// MTU implements Network: the loopback interface's MTU.
func (k *Kernel) MTU() int {
	ifc, err := net.InterfaceByName("lo")
	if err != nil {
		return 0
	}
	return ifc.MTU
}

// Listen implements Network.
func (k *Kernel) Listen(port uint16) (net.Listener, error) {
	return net.Listen(k.Network(), k.HostPort(port))
}

// Dial implements Network.
func (k *Kernel) Dial(ctx context.Context, port uint16) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, k.Network(), k.HostPort(port))
}

// Drops implements Network with host-wide counters.
func (k *Kernel) Drops() Drops {
	m := detail{}
	var d Drops
	for _, f := range []string{"rx_dropped", "tx_dropped"} {
		v := readUint("/sys/class/net/lo/statistics/" + f)
		d.Link += v
		m.add("host.lo."+f, v)
	}
	snmp := readSNMP("/proc/net/snmp", "Tcp")
	d.Retransmits = snmp["RetransSegs"]
	m.add("host.tcp.retrans_segs", snmp["RetransSegs"])
	ext := readSNMP("/proc/net/netstat", "TcpExt")
	for _, n := range []string{"ListenDrops", "ListenOverflows", "TCPBacklogDrop"} {
		d.Stack += ext[n]
		m.add("host.tcpext."+n, ext[n])
	}
	if k.family == 6 {
		// Linux's Ip6 MIB (RFC 4293's ipSystemStatsTable for IPv6).
		ip6 := readSNMP6("/proc/net/snmp6")
		for _, n := range []string{"Ip6InDiscards", "Ip6OutDiscards", "Ip6InAddrErrors", "Ip6InHdrErrors"} {
			d.Stack += ip6[n]
			m.add("host.ip6."+n, ip6[n])
		}
	}
	d.Detail = m.list()
	return d
}

// readSNMP6 reads /proc/net/snmp6: one "name value" pair a line.
func readSNMP6(path string) map[string]uint64 {
	out := map[string]uint64{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 {
			if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				out[f[0]] = v
			}
		}
	}
	return out
}

// Close implements Network.
func (k *Kernel) Close() error { return nil }

func readUint(path string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v
}

// readSNMP reads one protocol's counters from a /proc/net/snmp-shaped
// file: a header line of names and a line of values per protocol.
func readSNMP(path, proto string) map[string]uint64 {
	out := map[string]uint64{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var names []string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != proto+":" {
			continue
		}
		if names == nil {
			names = fields[1:]
			continue
		}
		for i, v := range fields[1:] {
			if i < len(names) {
				n, _ := strconv.ParseInt(v, 10, 64)
				if n >= 0 {
					out[names[i]] = uint64(n)
				}
			}
		}
		break
	}
	return out
}
