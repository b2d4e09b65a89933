package metrics

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry returns a registry with c, Prometheus' standard process
// collector (process_resident_memory_bytes and the rest) and Go runtime
// collector, and extra: the place where collectors of other parts of a
// process go (the QAT, USDM and zlib-shim metrics of a later issue).
func NewRegistry(c *Collector, extra ...prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, x := range append([]prometheus.Collector{c,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector()}, extra...) {
		if err := reg.Register(x); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return reg, nil
}

// Server serves a registry's /metrics over HTTP on the host's own
// network stack (not the user-space stack it reports on, so that a scrape
// still answers when that stack is in trouble).
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Listen listens on addr (host:port, e.g. 127.0.0.1:9464) and serves
// reg's metrics at /metrics until Close; errors of the HTTP side go to
// log.
func Listen(addr string, reg *prometheus.Registry, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		Registry: reg, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelError),
		// One scrape at a time is plenty; more wait rather than
		// visit every lcore at once.
		MaxRequestsInFlight: 4, Timeout: 10 * time.Second,
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "savanna: metrics are at /metrics")
	})
	s := &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }
