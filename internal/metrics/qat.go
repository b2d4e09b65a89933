package metrics

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/savanna-sim/savanna/internal/qatdev"
)

// QATCollector exports the QAT device process's telemetry
// (internal/qatdev, `simrun qat serve --metrics`) under the reserved
// prefixes savanna_qat_ (instances, requests, faults) and savanna_usdm_
// (pinned memory and leaks). It reads one Telemetry snapshot per scrape,
// so every family of a scrape comes from the same moment.
//
// Per-instance series exist once an instance has been held. Per-process
// series are labelled by pid and stay after the process has
// gone (their counters are what it did; its gauges read 0): a leak is
// seen after the exit that made it.
type QATCollector struct {
	read  func() qatdev.Telemetry
	descs qatDescs
}

type qatDescs struct {
	inUse, free, attachFail, requests, badRequests, connections, connected, unclean, faultsInj, faultsClr, panics *prometheus.Desc
	instReq, instIn, instOut, instErr, instBusy, instHeld                                                         *prometheus.Desc
	procReq, procIn, procOut, procErr, procInst, procAttachFail                                                   *prometheus.Desc
	pinned, pinnedBufs, allocFail, procLeakBytes, leakBytes, leakBufs, leakPages, exitsLeak, allocs, frees        *prometheus.Desc
}

// NewQATCollector returns a collector over read (the server's Telemetry
// method).
func NewQATCollector(read func() qatdev.Telemetry) *QATCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &QATCollector{read: read, descs: qatDescs{
		inUse:       d("savanna_qat_instances_in_use", "Instances held by processes now."),
		free:        d("savanna_qat_instances_free", "Instances free to attach now."),
		attachFail:  d("savanna_qat_attach_failures_total", "Attaches refused, by reason (no_instance: every instance held).", "reason"),
		requests:    d("savanna_qat_server_requests_total", "Requests the device process served on its socket."),
		badRequests: d("savanna_qat_bad_requests_total", "Requests refused as malformed."),
		connections: d("savanna_qat_connections_total", "Connections accepted."),
		connected:   d("savanna_qat_processes_connected", "Processes connected now."),
		unclean:     d("savanna_qat_unclean_exits_total", "Processes whose connection closed without exit (crashed or killed)."),
		faultsInj:   d("savanna_qat_faults_injected_total", "Fault injections requested."),
		faultsClr:   d("savanna_qat_faults_cleared_total", "Fault clears requested."),
		panics:      d("savanna_qat_internal_errors_total", "Requests that hit an internal error of the server or model."),

		instReq:  d("savanna_qat_instance_requests_total", "Requests by instance.", "instance"),
		instIn:   d("savanna_qat_instance_input_bytes_total", "Input bytes by instance.", "instance"),
		instOut:  d("savanna_qat_instance_output_bytes_total", "Output bytes by instance.", "instance"),
		instErr:  d("savanna_qat_instance_errors_total", "Failed requests by instance.", "instance"),
		instBusy: d("savanna_qat_instance_busy_seconds_total", "Modelled engine time by instance.", "instance"),
		instHeld: d("savanna_qat_instance_held", "1 when a process holds the instance.", "instance"),

		procReq:        d("savanna_qat_process_requests_total", "Requests by process.", "pid"),
		procIn:         d("savanna_qat_process_input_bytes_total", "Input bytes by process.", "pid"),
		procOut:        d("savanna_qat_process_output_bytes_total", "Output bytes by process.", "pid"),
		procErr:        d("savanna_qat_process_errors_total", "Failed requests by process.", "pid"),
		procInst:       d("savanna_qat_process_instances", "Instances the process holds now.", "pid"),
		procAttachFail: d("savanna_qat_process_attach_failures_total", "Attaches refused to the process.", "pid"),

		pinned:        d("savanna_usdm_process_pinned_bytes", "Pinned (USDM) bytes the process holds now.", "pid"),
		pinnedBufs:    d("savanna_usdm_process_pinned_buffers", "Pinned buffers the process holds now.", "pid"),
		allocFail:     d("savanna_usdm_process_alloc_failures_total", "Pinned allocations refused to the process.", "pid"),
		procLeakBytes: d("savanna_usdm_process_leaked_bytes_total", "Pinned bytes the process still held at exit.", "pid"),
		leakBytes:     d("savanna_usdm_leaked_bytes_total", "Pinned bytes held by processes at their exit."),
		leakBufs:      d("savanna_usdm_leaked_buffers_total", "Pinned buffers held by processes at their exit."),
		leakPages:     d("savanna_usdm_leaked_pages_total", "Hugepages held by processes at their exit."),
		exitsLeak:     d("savanna_usdm_exits_with_leaks_total", "Process exits that left pinned memory."),
		allocs:        d("savanna_usdm_allocs_total", "Pinned allocations granted."),
		frees:         d("savanna_usdm_frees_total", "Pinned buffers freed."),
	}}
}

// Describe sends every family's description.
func (c *QATCollector) Describe(ch chan<- *prometheus.Desc) {
	prometheus.DescribeByCollect(c, ch)
}

// Collect reads a snapshot and sends its samples.
func (c *QATCollector) Collect(ch chan<- prometheus.Metric) {
	t := c.read()
	d := &c.descs
	g := func(desc *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, l...)
	}
	n := func(desc *prometheus.Desc, v uint64, l ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), l...)
	}
	m, s := t.Model, t.Server
	g(d.inUse, float64(m.InstancesInUse))
	g(d.free, float64(m.InstancesFree))
	n(d.attachFail, m.AttachFailures.NoInstance, "no_instance")
	n(d.attachFail, m.AttachFailures.DeviceDown, "device_down")
	n(d.attachFail, m.AttachFailures.NoDevice, "no_device")
	n(d.requests, s.Requests)
	n(d.badRequests, s.BadRequests)
	n(d.connections, s.Connections)
	g(d.connected, float64(s.Active))
	n(d.unclean, s.Unclean)
	n(d.faultsInj, s.FaultsInjected)
	n(d.faultsClr, s.FaultsCleared)
	n(d.panics, s.Panics)
	for _, i := range t.Instances {
		if i.PID == 0 && i.Requests == 0 {
			// Never used: a c62x section has 256, and 6 series each
			// would say nothing instances_free does not.
			continue
		}
		name := i.Name
		if name == "" {
			name = fmt.Sprintf("%s/%d", i.Device, i.QP)
		}
		n(d.instReq, i.Requests, name)
		n(d.instIn, i.BytesIn, name)
		n(d.instOut, i.BytesOut, name)
		n(d.instErr, i.Errors, name)
		ch <- prometheus.MustNewConstMetric(d.instBusy, prometheus.CounterValue, i.Busy.Seconds(), name)
		held := 0.0
		if i.PID != 0 {
			held = 1
		}
		g(d.instHeld, held, name)
	}
	for _, p := range t.Processes {
		pid := strconv.Itoa(p.PID)
		n(d.procReq, p.Requests, pid)
		n(d.procIn, p.BytesIn, pid)
		n(d.procOut, p.BytesOut, pid)
		n(d.procErr, p.Errors, pid)
		g(d.procInst, float64(p.Instances), pid)
		n(d.procAttachFail, p.AttachFailures, pid)
		g(d.pinned, float64(p.PinnedBytes), pid)
		g(d.pinnedBufs, float64(p.PinnedBuffers), pid)
		n(d.allocFail, p.AllocFailures, pid)
		n(d.procLeakBytes, p.Leaked.Bytes, pid)
	}
	n(d.leakBytes, m.Leaked.Bytes)
	n(d.leakBufs, m.Leaked.Buffers)
	n(d.leakPages, m.Leaked.Pages)
	n(d.exitsLeak, s.ExitsWithLeaks)
	n(d.allocs, m.PinnedAllocs)
	n(d.frees, m.PinnedFrees)
}

// NewQATRegistry returns a registry with the QAT collector, Prometheus'
// standard process collector and the Go runtime collector: what the
// device process serves at /metrics (Listen).
func NewQATRegistry(c *QATCollector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, x := range []prometheus.Collector{c,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector()} {
		if err := reg.Register(x); err != nil {
			return nil, fmt.Errorf("metrics: qat: %w", err)
		}
	}
	return reg, nil
}
