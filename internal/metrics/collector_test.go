package metrics_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/savanna-sim/savanna/apps/echo"
	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/internal/metrics"
	"github.com/savanna-sim/savanna/stack/gonet"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// served is an echo server on B of a ring pair, read latency recorded,
// with a collector over B.
type served struct {
	pair  *livetest.RingPair
	srv   *echo.Server
	lat   *gonet.ReadLatency
	reads atomic.Int64
	c     *metrics.Collector
	reg   *prometheus.Registry
}

func newServed(lcores int) *served {
	return newServedWith(livetest.RingPairConfig{LcoresA: 1, LcoresB: lcores})
}

// newServedWith is newServed over the ring pair cfg describes.
func newServedWith(cfg livetest.RingPairConfig) *served {
	lcores := max(cfg.LcoresB, 1)
	pair, err := livetest.NewRingPairWith(cfg)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(pair.Stop)
	s := &served{pair: pair, srv: &echo.Server{}, lat: gonet.NewReadLatency(lcores)}
	ln, err := gonet.ListenOptions(pair.B, 7, gonet.DefaultBacklog, gonet.Options{Latency: s.lat})
	Expect(err).NotTo(HaveOccurred())
	go func() { _ = s.srv.Serve(ln) }()
	DeferCleanup(func() { _ = ln.Close() })
	s.c, err = metrics.New(metrics.Config{App: "echo", AppStats: echo.Stats{}, Version: "test",
		Read: func() metrics.Reading {
			s.reads.Add(1)
			return metrics.Reading{Survey: pair.B.Survey(false), XStats: pair.PB.XStats(),
				AppStats: s.srv.Stats(), Latency: s.lat.Histogram()}
		}})
	Expect(err).NotTo(HaveOccurred())
	s.reg, err = metrics.NewRegistry(s.c)
	Expect(err).NotTo(HaveOccurred())
	return s
}

// echoOnce dials B from A, sends n bytes, reads them back and closes.
func (s *served) echoOnce(n int) { s.echoTo("10.9.0.2:7", n) }

// echoTo is echoOnce to address ("[fd00::2]:7" over IPv6).
func (s *served) echoTo(address string, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := gonet.Dial(ctx, s.pair.A, address)
	Expect(err).NotTo(HaveOccurred())
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	msg := []byte(strings.Repeat("m", n))
	_, err = c.Write(msg)
	Expect(err).NotTo(HaveOccurred())
	_, err = io.ReadFull(c, msg)
	Expect(err).NotTo(HaveOccurred())
}

// families gathers and indexes by name.
func (s *served) families() map[string]*dto.MetricFamily {
	fs, err := s.reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	out := map[string]*dto.MetricFamily{}
	for _, f := range fs {
		out[f.GetName()] = f
	}
	return out
}

func labelNames(m *dto.Metric) []string {
	var out []string
	for _, l := range m.GetLabel() {
		out = append(out, l.GetName())
	}
	return out
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sample finds the value of family name's metric whose labels are kv
// pairs.
func sample(fs map[string]*dto.MetricFamily, name string, kv ...string) (float64, bool) {
	f := fs[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(kv); i += 2 {
			if labelValue(m, kv[i]) != kv[i+1] {
				continue next
			}
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue(), true
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// value is sample's value, failing when there is none.
func value(fs map[string]*dto.MetricFamily, name string, kv ...string) float64 {
	v, ok := sample(fs, name, kv...)
	ExpectWithOffset(1, ok).To(BeTrue(), "no %s%v", name, kv)
	return v
}

// jsonNames lists a struct's JSON names, nested structs as parent_child.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type.Kind() == reflect.Struct {
			for _, sub := range jsonNames(f.Type) {
				out = append(out, name+"."+sub)
			}
			continue
		}
		out = append(out, name)
	}
	return out
}

var _ = Describe("the stack's Prometheus collector", func() {
	It("exports every field of tcp.Stats per lcore, drops by reason, curr_estab and memory as gauges", func() {
		s := newServed(2)
		s.echoOnce(100)
		fs := s.families()
		for _, n := range jsonNames(reflect.TypeFor[tcp.Stats]()) {
			if reason, ok := strings.CutPrefix(n, "drops."); ok {
				for _, lc := range []string{"0", "1"} {
					_, found := sample(fs, "savanna_tcp_drops_total", "lcore", lc, "reason", reason)
					Expect(found).To(BeTrue(), "savanna_tcp_drops_total{lcore=%q,reason=%q}", lc, reason)
				}
				continue
			}
			_, counter := fs["savanna_tcp_"+n+"_total"]
			_, gauge := fs["savanna_tcp_"+n]
			Expect(counter || gauge).To(BeTrue(), "tcp.Stats %s has no metric", n)
		}
		Expect(fs["savanna_tcp_curr_estab"].GetType()).To(Equal(dto.MetricType_GAUGE))
		Expect(fs["savanna_tcp_in_segs_total"].GetType()).To(Equal(dto.MetricType_COUNTER))
		Expect(fs["savanna_tcp_in_segs_total"].GetMetric()).To(HaveLen(2), "one series per lcore")
	})

	It("exports every field of iface.Stats6 per lcore on a stack with IPv6, by the IPv4 counters' scheme", func() {
		s := newServedWith(livetest.RingPairConfig{LcoresA: 1, LcoresB: 2, A6: "fd00::1/64", B6: "fd00::2/64", FastDAD: true, AFirst: true})
		Eventually(func() bool { return livetest.Assigned6(s.pair.B) }, 10*time.Second, 10*time.Millisecond).Should(BeTrue())
		s.echoTo("[fd00::2]:7", 3000)
		fs := s.families()
		for _, n := range jsonNames(reflect.TypeFor[iface.Stats6]()) {
			// ipv6_out is exported as ipv6_tx, as IPv4's output
			// failures are tx.
			n = strings.Replace(n, "ipv6_out.", "ipv6_tx.", 1)
			// and "_us_" would read as microseconds to promlint.
			n = strings.Replace(n, "ndp.rx_solicits_not_for_us", "ndp.rx_solicits_not_ours", 1)
			name := "savanna_iface_" + strings.ReplaceAll(n, ".", "_") + "_total"
			Expect(fs).To(HaveKey(name), "iface.Stats6 %s has no metric", n)
			Expect(fs[name].GetType()).To(Equal(dto.MetricType_COUNTER), name)
			Expect(fs[name].GetMetric()).To(HaveLen(2), "%s: one series per lcore", name)
			for _, m := range fs[name].GetMetric() {
				Expect(labelNames(m)).To(Equal([]string{"lcore"}), name)
			}
		}
		// The ring port hashes IPv4 only, so IPv6 arrives on lcore 0.
		Expect(value(fs, "savanna_iface_ipv6_in_receives_total", "lcore", "0")).To(BeNumerically(">", 0))
		Expect(value(fs, "savanna_iface_ipv6_in_delivers_total", "lcore", "0")).To(BeNumerically(">", 0))
		Expect(value(fs, "savanna_iface_ipv6_tx_requests_total", "lcore", "0")).To(BeNumerically(">", 0))
		Expect(value(fs, "savanna_iface_ndp_tx_dad_solicits_total", "lcore", "0")).To(BeNumerically(">", 0))
		Expect(value(fs, "savanna_iface_ndp_rx_neighbor_solicits_total", "lcore", "0")).To(BeNumerically(">", 0))
		// IPv4's counters keep their names beside them.
		Expect(fs).To(HaveKey("savanna_iface_ip_in_receives_total"))
		problems, err := testutil.CollectAndLint(s.c)
		Expect(err).NotTo(HaveOccurred())
		Expect(problems).To(BeEmpty())
	})

	It("refuses a struct two of whose fields make one metric name", func() {
		type out struct {
			Requests uint64 `json:"requests"`
		}
		type clash struct {
			OutRequests uint64 `json:"out_requests"`
			Out         out    `json:"out"`
		}
		_, err := metrics.New(metrics.Config{App: "kv", AppStats: clash{}, Read: func() metrics.Reading { return metrics.Reading{} }})
		Expect(err).To(MatchError(ContainSubstring(`fields OutRequests and Requests both make "savanna_kv_out_requests_total"`)))
	})

	It("sends no IPv6 series for a stack without IPv6", func() {
		s := newServed(1)
		s.echoOnce(100)
		for name := range s.families() {
			for _, p := range []string{"savanna_iface_ipv6_", "savanna_iface_icmpv6_", "savanna_iface_ndp_", "savanna_iface_pmtu_"} {
				Expect(name).NotTo(HavePrefix(p))
			}
		}
	})

	It("follows Prometheus' naming conventions: promlint finds nothing, names start savanna_, counters end _total", func() {
		s := newServed(1)
		s.echoOnce(100)
		problems, err := testutil.CollectAndLint(s.c)
		Expect(err).NotTo(HaveOccurred())
		Expect(problems).To(BeEmpty())
		for name, f := range s.families() {
			if strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "go_") {
				continue
			}
			Expect(name).To(HavePrefix("savanna_"))
			Expect(f.GetHelp()).NotTo(BeEmpty(), name)
			if f.GetType() == dto.MetricType_COUNTER {
				Expect(name).To(HaveSuffix("_total"))
			} else {
				Expect(name).NotTo(HaveSuffix("_total"))
			}
		}
	})

	It("labels per-lcore figures with lcore and per-queue ones with queue, and gives the families their types", func() {
		s := newServed(2)
		s.echoOnce(100)
		fs := s.families()
		types := map[string]dto.MetricType{
			"savanna_lcore_polls_total":             dto.MetricType_COUNTER,
			"savanna_lcore_parked_seconds_total":    dto.MetricType_COUNTER,
			"savanna_tcp_sockets":                   dto.MetricType_GAUGE,
			"savanna_ethdev_rx_packets_total":       dto.MetricType_COUNTER,
			"savanna_ethdev_queue_rx_packets_total": dto.MetricType_COUNTER,
			"savanna_ethdev_xstats_total":           dto.MetricType_COUNTER,
			"savanna_mempool_in_use_mbufs":          dto.MetricType_GAUGE,
			"savanna_mempool_failed_gets_total":     dto.MetricType_COUNTER,
			"savanna_echo_bytes_total":              dto.MetricType_COUNTER,
			"savanna_echo_active":                   dto.MetricType_GAUGE,
			"savanna_read_latency_seconds":          dto.MetricType_SUMMARY,
			"savanna_build_info":                    dto.MetricType_GAUGE,
			"savanna_tcp_mem_budget_in_use_bytes":   dto.MetricType_GAUGE,
			"process_resident_memory_bytes":         dto.MetricType_GAUGE,
		}
		for name, t := range types {
			Expect(fs).To(HaveKey(name))
			Expect(fs[name].GetType()).To(Equal(t), name)
		}
		for name, f := range fs {
			switch {
			case strings.HasPrefix(name, "savanna_tcp_mem_budget_"):
				// The memory budget is the process's, shared by the
				// lcores (Linux's tcp_mem).
				for _, m := range f.GetMetric() {
					Expect(labelNames(m)).To(BeEmpty(), name)
				}
			case strings.HasPrefix(name, "savanna_lcore_"), strings.HasPrefix(name, "savanna_lstack_"),
				strings.HasPrefix(name, "savanna_iface_"), strings.HasPrefix(name, "savanna_tcp_"):
				for _, m := range f.GetMetric() {
					Expect(labelNames(m)).To(ContainElement("lcore"), name)
				}
			case strings.HasPrefix(name, "savanna_ethdev_queue_"):
				Expect(f.GetMetric()).To(HaveLen(2), name)
				Expect(labelNames(f.GetMetric()[0])).To(Equal([]string{"queue"}), name)
			}
		}
		Expect(value(fs, "savanna_lcore_polls_total", "lcore", "1", "result", "idle")).To(BeNumerically(">", 0))
		Expect(value(fs, "savanna_tcp_sockets", "lcore", "0", "state", "LISTEN")).To(BeEquivalentTo(1))
		Expect(value(fs, "savanna_tcp_sockets", "lcore", "1", "state", "LISTEN")).To(BeEquivalentTo(1))
		Expect(value(fs, "savanna_echo_conns_total")).To(BeEquivalentTo(1))
		Expect(fs["savanna_read_latency_seconds"].GetMetric()[0].GetSummary().GetSampleCount()).To(BeNumerically(">=", 1))
	})

	It("reads the stack once per scrape", func() {
		s := newServed(1)
		before := s.reads.Load()
		s.families()
		Expect(s.reads.Load() - before).To(BeEquivalentTo(1))
		s.families()
		Expect(s.reads.Load() - before).To(BeEquivalentTo(2))
	})

	It("never lets a counter go down from one scrape to the next while traffic runs", func() {
		s := newServed(2)
		prev := map[string]float64{}
		rose := 0
		for round := 0; round < 6; round++ {
			for i := 0; i < 5; i++ {
				s.echoOnce(3000)
			}
			for name, f := range s.families() {
				if f.GetType() != dto.MetricType_COUNTER || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
					continue
				}
				for _, m := range f.GetMetric() {
					key := name + fmt.Sprint(labelNamesValues(m))
					v := m.GetCounter().GetValue()
					if p, ok := prev[key]; ok {
						Expect(v).To(BeNumerically(">=", p), "%s went down", key)
						if v > p {
							rose++
						}
					}
					prev[key] = v
				}
			}
		}
		Expect(prev[`savanna_echo_bytes_total[]`]).To(BeEquivalentTo(6 * 5 * 3000))
		Expect(rose).To(BeNumerically(">", 20), "counters that rose between scrapes")
	})

	It("refuses an app whose Stats is not a struct or whose name makes no metric name", func() {
		read := func() metrics.Reading { return metrics.Reading{} }
		_, err := metrics.New(metrics.Config{App: "kv", AppStats: 3, Read: read})
		Expect(err).To(MatchError(ContainSubstring("kv Stats is a int, want a struct")))
		_, err = metrics.New(metrics.Config{App: "k-v", AppStats: echo.Stats{}, Read: read})
		Expect(err).To(MatchError(ContainSubstring(`app "k-v" makes no metric name`)))
		_, err = metrics.New(metrics.Config{App: "kv"})
		Expect(err).To(MatchError(ContainSubstring("Read is nil")))
	})

	It("serves the text format at /metrics over HTTP, with the process collector's resident memory", func() {
		s := newServed(1)
		srv, err := metrics.Listen("127.0.0.1:0", s.reg, slog.New(slog.NewTextHandler(GinkgoWriter, nil)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Close)
		resp, err := http.Get("http://" + srv.Addr().String() + "/metrics")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Header.Get("Content-Type")).To(HavePrefix("text/plain"))
		Expect(string(b)).To(ContainSubstring("# TYPE savanna_tcp_in_segs_total counter"))
		Expect(string(b)).To(ContainSubstring(`savanna_build_info{version="test"} 1`))
		Expect(string(b)).To(MatchRegexp(`(?m)^process_resident_memory_bytes \S+$`))

		_, err = metrics.Listen(srv.Addr().String(), s.reg, slog.New(slog.NewTextHandler(GinkgoWriter, nil)))
		Expect(err).To(MatchError(ContainSubstring("address already in use")))
		_, err = net.Dial("tcp", srv.Addr().String())
		Expect(err).NotTo(HaveOccurred())
	})
})

func labelNamesValues(m *dto.Metric) []string {
	var out []string
	for _, l := range m.GetLabel() {
		out = append(out, l.GetName()+"="+l.GetValue())
	}
	return out
}
