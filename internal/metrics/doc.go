// Package metrics serves a running stack's figures in Prometheus' text
// exposition format, for simrun serve --metrics.
//
// One Collector (a prometheus.Collector) takes one Reading per scrape:
// one visit to every lcore (rt.Runtime.Survey), the port's xstats, the
// application's counters and the read-latency histogram, all read at the
// start of Collect. The figures of one scrape are therefore consistent
// with each other per lcore, and nothing is sampled in the background.
// The HTTP side is github.com/prometheus/client_golang's promhttp, the
// Prometheus project's own client library (well kept, used by most Go
// exporters), with its standard process collector
// (process_resident_memory_bytes, process_cpu_seconds_total, ...) and Go
// runtime collector (go_goroutines, go_memstats_*) beside ours.
//
// Naming follows Prometheus' conventions
// (https://prometheus.io/docs/practices/naming/): every metric of ours
// starts with savanna_; counters end in _total; units are in the name
// (_bytes, _seconds; time counted in nanoseconds is exported in seconds);
// one lcore's figures carry the label lcore, one queue's the label queue;
// a family that sums over a label (drops by reason, polls by result,
// sockets by state) uses a label rather than one metric per value. The
// per-layer families are derived from the stack's own Stats structs by
// their JSON names, so a counter added to tcp.Stats appears here without
// an edit: uint64 fields are counters, signed integers gauges, with the
// few exceptions each family lists (tcp's curr_estab is a gauge). A
// stack with IPv6 adds its IPv6 side's counters (iface.Stats6) under the
// same prefix and label: savanna_iface_ipv6_in_receives_total{lcore="0"}
// beside IPv4's savanna_iface_ip_in_receives_total, and
// savanna_iface_ipv6_tx_* (output failures, as IPv4's are
// savanna_iface_tx_*), savanna_iface_icmpv6_*, savanna_iface_ndp_*,
// savanna_iface_pmtu_*; an IPv4-only stack sends none of them.
//
// Metrics of processes that do not exist yet: the QAT device and its
// rings (savanna_qat_*), USDM memory (savanna_usdm_*) and the zlib shim
// (savanna_zlibshim_*) belong to the process that will drive them (a later
// issue). That process registers a prometheus.Collector of its own beside
// this one through NewRegistry's extra collectors; the prefixes are
// reserved for it.
package metrics
