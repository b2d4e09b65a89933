package netw

import (
	"bufio"
	"context"

	"net"
	"os"
	"strconv"
	"strings"
)

// Kernel is Go's net package over the kernel's loopback interface. The
// kernel keeps no per-process loss counters, so Drops reads the
// host-wide ones (the loopback interface's dropped frames, TCP's
// RetransSegs): an upper bound when other programs run.
type Kernel struct{}

// NewKernel returns the loopback network.
func NewKernel() (*Kernel, error) { return &Kernel{}, nil }

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
	return net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
}

// Dial implements Network.
func (k *Kernel) Dial(ctx context.Context, port uint16) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
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
	d.Detail = m.list()
	return d
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
