package qatdev

import (
	"time"

	"github.com/savanna-sim/savanna/sim/qat"
)

// Telemetry is the device process's statistics: its own counters, each
// instance's and each process's work, and the model's full statistics.
type Telemetry struct {
	// Uptime is the wall time since the server started.
	Uptime    time.Duration       `json:"uptime"`
	Server    ServerCounters      `json:"server"`
	Instances []InstanceTelemetry `json:"instances"`
	Processes []ProcessTelemetry  `json:"processes"`
	// Model is the QAT model's statistics (instances in use and free,
	// devices, engines, USDM nodes, leaks, syscalls).
	Model qat.ServiceStats `json:"model"`
}

// ServerCounters are the device process's own counters.
type ServerCounters struct {
	// Connections counts accepted connections; Processes those that said
	// hello (took a memfd); Active those connected now.
	Connections uint64 `json:"connections"`
	Processes   uint64 `json:"processes"`
	Active      int    `json:"active"`
	// Disconnects counts processes whose connection closed; Unclean those
	// among them that had not sent exit first (crashed or killed).
	Disconnects uint64 `json:"disconnects"`
	Unclean     uint64 `json:"unclean"`
	// ExitsWithLeaks counts processes that held pinned memory at exit.
	ExitsWithLeaks uint64 `json:"exits_with_leaks"`
	// Requests counts requests served; BadRequests those refused as
	// malformed (undecodable, unknown op, offsets outside the memfd, an
	// instance not held); LastBadRequest says why the last one was.
	Requests       uint64 `json:"requests"`
	BadRequests    uint64 `json:"bad_requests"`
	LastBadRequest string `json:"last_bad_request,omitempty"`
	// RefusedPIDs counts hellos refused because the PID is already
	// connected.
	RefusedPIDs uint64 `json:"refused_pids"`
	// MemfdFull counts allocations the model granted but the process's
	// memfd had no room for (refused as no pinned memory).
	MemfdFull uint64 `json:"memfd_full"`
	// Waits counts thread-mode waits (the server blocking a process
	// until a completion is due) and WaitTimeouts those that ended with
	// none. The model counts no futex for them: the wait is real.
	Waits        uint64 `json:"waits"`
	WaitTimeouts uint64 `json:"wait_timeouts"`
	// Panics counts requests that hit a bug of the server or the model:
	// they fail with "internal error" and the server goes on.
	Panics uint64 `json:"panics"`
	// FaultsInjected and FaultsCleared count control requests.
	FaultsInjected uint64 `json:"faults_injected"`
	FaultsCleared  uint64 `json:"faults_cleared"`
}

// InstanceTelemetry is one instance's work over the server's life.
type InstanceTelemetry struct {
	Device string `json:"device"`
	QP     int    `json:"qp"`
	Name   string `json:"name"`
	// PID holds it now (0: free).
	PID      int    `json:"pid"`
	Requests uint64 `json:"requests"`
	BytesIn  uint64 `json:"bytes_in"`
	BytesOut uint64 `json:"bytes_out"`
	// Busy is the modelled engine time of its requests.
	Busy   time.Duration `json:"busy"`
	Errors uint64        `json:"errors"`
}

// ProcessTelemetry is one process's work and holdings.
type ProcessTelemetry struct {
	PID       int    `json:"pid"`
	Connected bool   `json:"connected"`
	Instances int    `json:"instances"`
	Requests  uint64 `json:"requests"`
	BytesIn   uint64 `json:"bytes_in"`
	BytesOut  uint64 `json:"bytes_out"`
	Errors    uint64 `json:"errors"`
	// AttachFailures and AllocFailures are refusals the model counted.
	AttachFailures uint64 `json:"attach_failures"`
	AllocFailures  uint64 `json:"alloc_failures"`
	PinnedBuffers  int64  `json:"pinned_buffers"`
	PinnedBytes    uint64 `json:"pinned_bytes"`
	// Leaked is what it held at exit, as the model's Exit counted it.
	Leaked qat.LeakCounts `json:"leaked"`
}

// instKey names an instance.
type instKey struct {
	dev string
	qp  int
}

// work is requests, bytes and errors, kept per instance and per process.
type work struct {
	requests, bytesIn, bytesOut, errors uint64
	busy                                time.Duration
}
