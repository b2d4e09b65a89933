package metrics

import (
	"fmt"
	"reflect"
	"strconv"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Reading is everything one scrape reports, read once at its start.
type Reading struct {
	// Survey is one visit to every lcore (rt.Runtime.Survey(false)).
	Survey rt.Survey
	// XStats are the port's extended statistics (hw.EthDev.XStats).
	XStats []hw.XStat
	// AppStats is the application's Stats value, of the type given to
	// New.
	AppStats any
	// Latency is the read-latency histogram in nanoseconds
	// (stack/gonet.ReadLatency), nil when not recorded.
	Latency *hdr.Histogram
}

// Config is what a Collector needs.
type Config struct {
	// App names the application ("kv", "echo"): its counters are
	// savanna_<App>_<field>.
	App string
	// AppStats is a value of the application's Stats type; its fields
	// become the app's metrics (uint64 counters, signed gauges).
	AppStats any
	// Read takes one Reading; it is called once per scrape.
	Read func() Reading
	// Version is reported as savanna_build_info's version label.
	Version string
}

// Collector is the prometheus.Collector of a running stack.
type Collector struct {
	cfg     Config
	appType reflect.Type

	driver, stack, ifc, ifc6, tcpStats, tcpMem, app *derived

	port      portDescs
	xstat     *prometheus.Desc
	polls     *prometheus.Desc
	sockets   *prometheus.Desc
	pool      poolDescs
	arpDrops  *prometheus.Desc
	latency   *prometheus.Desc
	buildInfo *prometheus.Desc
}

type portDescs struct {
	rxPackets, txPackets, rxBytes, txBytes, rxMissed, rxErrors, txErrors, rxNoMbuf *prometheus.Desc
	qRxPackets, qTxPackets, qRxBytes, qTxBytes, qErrors                            *prometheus.Desc
}

type poolDescs struct {
	size, available, inUse, gets, failedGets *prometheus.Desc
}

// Quantiles are the read-latency summary's quantiles.
var quantiles = []float64{0.5, 0.9, 0.99, 0.999}

// New returns the collector. It fails when a Stats struct has a field
// whose name makes no valid metric name.
func New(cfg Config) (*Collector, error) {
	if cfg.Read == nil {
		return nil, fmt.Errorf("metrics: Config.Read is nil")
	}
	if !validName.MatchString("savanna_" + cfg.App) {
		return nil, fmt.Errorf("metrics: app %q makes no metric name", cfg.App)
	}
	c := &Collector{cfg: cfg}
	lc := []string{"lcore"}
	var err error
	if c.driver, err = derive(reflect.TypeFor[rt.LcoreStats](), shape{prefix: "savanna_lcore", what: "rt.LcoreStats", labels: lc}); err != nil {
		return nil, err
	}
	if c.stack, err = derive(reflect.TypeFor[lstack.Stats](), shape{prefix: "savanna_lstack", what: "lstack.Stats", labels: lc,
		skip: map[string]bool{"polls": true, "idle_polls": true}}); err != nil {
		return nil, err
	}
	if c.ifc, err = derive(reflect.TypeFor[iface.Stats](), shape{prefix: "savanna_iface", what: "iface.Stats", labels: lc}); err != nil {
		return nil, err
	}
	// The IPv6 side's counters (rt.LcoreSnapshot.Iface6) by the same
	// scheme as iface.Stats': savanna_iface_ipv6_*, _icmpv6_*, _ndp_*,
	// _pmtu_*, per lcore; their JSON names differ from iface.Stats' (ip,
	// icmp), so the two never share a name. Output failures (ipv6_out)
	// become _ipv6_tx_*, as IPv4's are _tx_*. ND's
	// rx_solicits_not_for_us becomes rx_solicits_not_ours (promlint reads
	// "_us_" as microseconds; ipv6_out's rx_not_ours is the same idea).
	if c.ifc6, err = derive(reflect.TypeFor[iface.Stats6](), shape{prefix: "savanna_iface", what: "iface.Stats6", labels: lc,
		rename: map[string]string{"ipv6_out": "ipv6_tx", "ndp.rx_solicits_not_for_us": "rx_solicits_not_ours"}}); err != nil {
		return nil, err
	}
	if c.tcpStats, err = derive(reflect.TypeFor[tcp.Stats](), shape{prefix: "savanna_tcp", what: "tcp.Stats", labels: lc,
		gauges: map[string]bool{"curr_estab": true}, labelled: map[string]string{"drops": "reason"}}); err != nil {
		return nil, err
	}
	if c.tcpMem, err = derive(reflect.TypeFor[tcp.MemBudgetStats](), shape{prefix: "savanna_tcp_mem_budget", what: "tcp.MemBudgetStats"}); err != nil {
		return nil, err
	}
	if cfg.AppStats != nil {
		c.appType = reflect.TypeOf(cfg.AppStats)
		if c.app, err = derive(c.appType, shape{prefix: "savanna_" + cfg.App, what: cfg.App + " Stats"}); err != nil {
			return nil, err
		}
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	c.port = portDescs{
		rxPackets:  d("savanna_ethdev_rx_packets_total", "Packets the port received (rte_eth_stats ipackets)."),
		txPackets:  d("savanna_ethdev_tx_packets_total", "Packets the port transmitted (opackets)."),
		rxBytes:    d("savanna_ethdev_rx_bytes_total", "Bytes the port received (ibytes)."),
		txBytes:    d("savanna_ethdev_tx_bytes_total", "Bytes the port transmitted (obytes)."),
		rxMissed:   d("savanna_ethdev_rx_missed_total", "Packets dropped because an rx ring was full (imissed)."),
		rxErrors:   d("savanna_ethdev_rx_errors_total", "Erroneous packets received (ierrors)."),
		txErrors:   d("savanna_ethdev_tx_errors_total", "Packets that failed to transmit (oerrors)."),
		rxNoMbuf:   d("savanna_ethdev_rx_nombuf_total", "Packets dropped for want of an mbuf (rx_nombuf)."),
		qRxPackets: d("savanna_ethdev_queue_rx_packets_total", "Packets received per rx queue (q_ipackets).", "queue"),
		qTxPackets: d("savanna_ethdev_queue_tx_packets_total", "Packets transmitted per tx queue (q_opackets).", "queue"),
		qRxBytes:   d("savanna_ethdev_queue_rx_bytes_total", "Bytes received per rx queue (q_ibytes).", "queue"),
		qTxBytes:   d("savanna_ethdev_queue_tx_bytes_total", "Bytes transmitted per tx queue (q_obytes).", "queue"),
		qErrors:    d("savanna_ethdev_queue_errors_total", "Packets dropped per rx queue (q_errors).", "queue"),
	}
	c.xstat = d("savanna_ethdev_xstats_total", "The port's extended statistics (rte_eth_xstats_get), by the driver's name.", "xstat")
	c.polls = d("savanna_lcore_polls_total", "Polls of the lcore's stack instance: busy ones found work, idle ones none.", "lcore", "result")
	c.sockets = d("savanna_tcp_sockets", "TCP sockets by state (RFC 9293 section 3.3.2; LISTEN counts listeners).", "lcore", "state")
	c.pool = poolDescs{
		size:       d("savanna_mempool_mbufs", "Mbufs in the pool."),
		available:  d("savanna_mempool_available_mbufs", "Mbufs free in the pool."),
		inUse:      d("savanna_mempool_in_use_mbufs", "Mbufs taken from the pool and not returned."),
		gets:       d("savanna_mempool_gets_total", "Successful gets of one mbuf."),
		failedGets: d("savanna_mempool_failed_gets_total", "Gets refused because the pool was empty."),
	}
	c.arpDrops = d("savanna_arp_copy_drops_total", "Copies of ARP frames that could not be handed to a peer lcore.")
	c.latency = d("savanna_read_latency_seconds", "Time from bytes entering a socket's empty receive ring to the application's Read that takes them (stack/gonet.ReadLatency).")
	c.buildInfo = d("savanna_build_info", "Savanna's version; always 1.", "version")
	return c, nil
}

// Describe implements prometheus.Collector: every metric the collector
// can send, so that the registry checks names and labels up front.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, dv := range []*derived{c.driver, c.stack, c.ifc, c.ifc6, c.tcpStats, c.tcpMem, c.app} {
		if dv != nil {
			for _, d := range dv.descs {
				ch <- d
			}
		}
	}
	p := c.port
	for _, d := range []*prometheus.Desc{p.rxPackets, p.txPackets, p.rxBytes, p.txBytes, p.rxMissed, p.rxErrors,
		p.txErrors, p.rxNoMbuf, p.qRxPackets, p.qTxPackets, p.qRxBytes, p.qTxBytes, p.qErrors,
		c.xstat, c.polls, c.sockets, c.pool.size, c.pool.available, c.pool.inUse, c.pool.gets, c.pool.failedGets,
		c.arpDrops, c.latency, c.buildInfo} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one Reading, then its figures.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	r := c.cfg.Read()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(c.buildInfo, 1, c.cfg.Version)

	ps, p := r.Survey.Port, c.port
	counter(p.rxPackets, ps.IPackets)
	counter(p.txPackets, ps.OPackets)
	counter(p.rxBytes, ps.IBytes)
	counter(p.txBytes, ps.OBytes)
	counter(p.rxMissed, ps.IMissed)
	counter(p.rxErrors, ps.IErrors)
	counter(p.txErrors, ps.OErrors)
	counter(p.rxNoMbuf, ps.RxNoMbuf)
	for _, q := range []struct {
		d *prometheus.Desc
		v []uint64
	}{{p.qRxPackets, ps.QIPackets}, {p.qTxPackets, ps.QOPackets}, {p.qRxBytes, ps.QIBytes}, {p.qTxBytes, ps.QOBytes}, {p.qErrors, ps.QErrors}} {
		for i, v := range q.v {
			counter(q.d, v, strconv.Itoa(i))
		}
	}
	seen := make(map[string]bool, len(r.XStats))
	for _, x := range r.XStats {
		if seen[x.Name] {
			continue // a driver naming two xstats alike: keep the first
		}
		seen[x.Name] = true
		counter(c.xstat, x.Value, x.Name)
	}

	for i, l := range r.Survey.Lcores {
		id := strconv.Itoa(l.Lcore)
		c.driver.collect(ch, reflect.ValueOf(l.Driver), id)
		counter(c.polls, l.Stack.Polls-min(l.Stack.IdlePolls, l.Stack.Polls), id, "busy")
		counter(c.polls, l.Stack.IdlePolls, id, "idle")
		c.stack.collect(ch, reflect.ValueOf(l.Stack), id)
		c.ifc.collect(ch, reflect.ValueOf(l.Iface), id)
		if l.Iface6 != nil {
			// Only a stack with IPv6 has these: an IPv4-only one sends
			// no series rather than zeros.
			c.ifc6.collect(ch, reflect.ValueOf(*l.Iface6), id)
		}
		c.tcpStats.collect(ch, reflect.ValueOf(l.TCP), id)
		if i < len(r.Survey.States) {
			for st, n := range r.Survey.States[i] {
				if tcp.State(st) != tcp.StateClosed {
					gauge(c.sockets, float64(n), id, tcp.State(st).String())
				}
			}
		}
	}

	pool := r.Survey.Pool
	gauge(c.pool.size, float64(pool.Size))
	gauge(c.pool.available, float64(pool.Available))
	gauge(c.pool.inUse, float64(pool.InUse))
	counter(c.pool.gets, pool.Gets)
	counter(c.pool.failedGets, pool.FailedGets)
	counter(c.arpDrops, r.Survey.ARPCopyDrops)
	c.tcpMem.collect(ch, reflect.ValueOf(r.Survey.TCPMem))

	if c.app != nil && r.AppStats != nil && reflect.TypeOf(r.AppStats) == c.appType {
		c.app.collect(ch, reflect.ValueOf(r.AppStats))
	}
	if h := r.Latency; h != nil {
		q := make(map[float64]float64, len(quantiles))
		for _, x := range quantiles {
			q[x] = float64(h.ValueAtQuantile(x*100)) / 1e9
		}
		n := h.TotalCount()
		ch <- prometheus.MustNewConstSummary(c.latency, uint64(n), h.Mean()*float64(n)/1e9, q)
	}
}

var _ prometheus.Collector = (*Collector)(nil)
