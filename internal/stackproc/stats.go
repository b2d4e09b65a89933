package stackproc

import (
	"fmt"
	"sort"
	"strings"
)

// ProcStats are one process's statistics.
type ProcStats struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm,omitempty"`
	// Exited says the process's connection closed.
	Exited bool `json:"exited"`
	// Opened counts sockets the process created or accepted;
	// Accepted and Connected those that accept and connect gave.
	Opened, Accepted, Connected, ConnectFailed uint64
	// Inherited counts listeners the process took over from the
	// parent that forked it.
	Inherited uint64 `json:"inherited,omitempty"`
	// Requests counts control requests, BadRequests those naming no
	// socket of the process or no operation; Doorbells the app's rings.
	Requests, BadRequests, Doorbells uint64
	// SlotsExhausted counts sockets refused (EMFILE) for want of a
	// slot; ResponsesDropped responses with no room in the response
	// ring (a process that broke the protocol).
	SlotsExhausted, ResponsesDropped uint64
	// RxBytes and TxBytes are the bytes the stack gave the process and
	// took from it, over its closed sockets.
	RxBytes, TxBytes uint64
	// Calls and Refused are the app library's counts per call: every
	// interposed call on a socket of the stack, and those it failed as
	// unsupported (errno as Linux would give).
	Calls   map[string]uint64 `json:"calls,omitempty"`
	Refused map[string]uint64 `json:"refused,omitempty"`
	// Sockets are the closed sockets' records (at most
	// Config.MaxSocketRecords; SocketRecordsDropped counts the rest).
	Sockets              []SockStats `json:"sockets,omitempty"`
	SocketRecordsDropped uint64      `json:"socket_records_dropped,omitempty"`
}

// SockStats are one socket's statistics.
type SockStats struct {
	Slot int `json:"slot"`
	// Kind is listen, accepted or connected.
	Kind          string `json:"kind"`
	Local, Remote string
	RxBytes       uint64 `json:"rx_bytes"`
	TxBytes       uint64 `json:"tx_bytes"`
	Accepts       uint64 `json:"accepts,omitempty"`
	RxRingFull    uint64 `json:"rx_ring_full,omitempty"`
	End           string `json:"end,omitempty"`
	// Open says the socket was still open when the statistics were
	// taken (a process still connected); its bytes are not yet in its
	// process's RxBytes and TxBytes.
	Open bool `json:"open,omitempty"`
}

func (p *proc) stats() ProcStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.st
	st.Sockets = append([]SockStats(nil), p.st.Sockets...)
	if !st.Exited && p.mem.b != nil {
		st.Calls, st.Refused = p.callCounts()
		for _, k := range p.socks {
			if k != nil && k.st.Kind != "" {
				ks := k.st
				ks.Open = true
				st.Sockets = append(st.Sockets, ks)
			}
		}
	}
	return st
}

// callCounts reads the app library's counters per call, and those it
// refused, from the memfd's header; under p.mu, with the memfd mapped.
func (p *proc) callCounts() (calls, refused map[string]uint64) {
	for i := range CallNames {
		if n := p.mem.Counter(i, false); n != 0 {
			if calls == nil {
				calls = map[string]uint64{}
			}
			calls[CallNames[i]] = n
		}
		if n := p.mem.Counter(i, true); n != 0 {
			if refused == nil {
				refused = map[string]uint64{}
			}
			refused[CallNames[i]] = n
		}
	}
	return calls, refused
}

func kv(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	return b.String()
}

func (p ProcStats) line() string {
	s := fmt.Sprintf("preload process pid=%d comm=%s exited=%v opened=%d accepted=%d connected=%d connect_failed=%d requests=%d bad_requests=%d doorbells=%d rx_bytes=%d tx_bytes=%d",
		p.PID, p.Comm, p.Exited, p.Opened, p.Accepted, p.Connected, p.ConnectFailed, p.Requests, p.BadRequests, p.Doorbells, p.RxBytes, p.TxBytes)
	if p.Inherited != 0 {
		s += fmt.Sprintf(" inherited=%d", p.Inherited)
	}
	if p.SlotsExhausted != 0 {
		s += fmt.Sprintf(" slots_exhausted=%d", p.SlotsExhausted)
	}
	if p.ResponsesDropped != 0 {
		s += fmt.Sprintf(" responses_dropped=%d", p.ResponsesDropped)
	}
	if p.SocketRecordsDropped != 0 {
		s += fmt.Sprintf(" socket_records_dropped=%d", p.SocketRecordsDropped)
	}
	if len(p.Calls) > 0 {
		s += " calls=" + kv(p.Calls)
	}
	if len(p.Refused) > 0 {
		s += " refused=" + kv(p.Refused)
	}
	return s + "\n"
}

func (k SockStats) line(pid int) string {
	open := ""
	if k.Open {
		open = " open=true"
	}
	return fmt.Sprintf("preload socket pid=%d slot=%d kind=%s local=%s remote=%s rx_bytes=%d tx_bytes=%d accepts=%d rx_ring_full=%d end=%s%s\n",
		pid, k.Slot, k.Kind, k.Local, k.Remote, k.RxBytes, k.TxBytes, k.Accepts, k.RxRingFull, k.End, open)
}
