package kv

import (
	"net"
	"sync"

	"github.com/savanna-sim/savanna/apps/resp"
	"github.com/savanna-sim/savanna/internal/netserve"
)

// Stats are the server's counters and its memory account. The names
// follow Redis's INFO fields where Redis has one.
type Stats struct {
	// Conns counts the connections Serve accepted.
	Conns uint64 `json:"conns"`
	// Clients is the clients served now (INFO connected_clients).
	Clients        int    `json:"clients"`
	Commands       uint64 `json:"commands"`
	UnknownCmds    uint64 `json:"unknown_commands"`
	ProtocolErrors uint64 `json:"protocol_errors"`
	Keys           int    `json:"keys"`

	// UsedMemory is the server's account of the bytes it holds: the
	// store, and the query and output buffers (INFO used_memory counts
	// the same things); UsedMemoryPeak its highest value.
	UsedMemory     int64 `json:"used_memory"`
	UsedMemoryPeak int64 `json:"used_memory_peak"`
	// StoreMemory is the keys and values (resp.Store.Memory; INFO
	// used_memory_dataset).
	StoreMemory int64 `json:"store_memory"`
	// QueryBuffers and OutputBuffers are all clients' buffers now.
	QueryBuffers  int64 `json:"query_buffers"`
	OutputBuffers int64 `json:"output_buffers"`
	// MaxMemory is the configured maxmemory (negative: none).
	MaxMemory int64 `json:"maxmemory"`

	// OOMRefused counts commands refused with -OOM (Redis counts them
	// in rejected_calls).
	OOMRefused uint64 `json:"oom_refused"`
	// QueryBufferLimitClosed counts clients closed at
	// client-query-buffer-limit (INFO
	// client_query_buffer_limit_disconnections).
	QueryBufferLimitClosed uint64 `json:"query_buffer_limit_closed"`
	// QueryBufferOOMClosed and OutputBufferOOMClosed count clients
	// closed because maxmemory could not grant their query or output
	// buffer (Redis's client eviction, INFO evicted_clients).
	QueryBufferOOMClosed  uint64 `json:"query_buffer_oom_closed"`
	OutputBufferOOMClosed uint64 `json:"output_buffer_oom_closed"`
	// OutputBufferLimitClosed counts clients closed at
	// client-output-buffer-limit (INFO
	// client_output_buffer_limit_disconnections).
	OutputBufferLimitClosed uint64 `json:"output_buffer_limit_closed"`
	// MaxClientsRefused counts connections refused at maxclients (INFO
	// rejected_connections).
	MaxClientsRefused uint64 `json:"maxclients_refused"`
	// IdleTimeoutClosed counts clients closed after timeout idle.
	IdleTimeoutClosed uint64 `json:"idle_timeout_closed"`
}

// Server is the key-value server: connections share one resp.Store,
// which executes the commands under a lock, and one memory account
// (Limits.MaxMemory). The zero value is not usable: use New.
type Server struct {
	lim Limits

	// mu guards the store, the memory account, the open count and
	// the counters.
	mu    sync.Mutex
	store *resp.Store
	acct  account
	open  int
	stats Stats

	lns netserve.Listeners
	wg  sync.WaitGroup
}

// New returns an empty server with limits lim (zero fields take their
// defaults).
func New(lim Limits) (*Server, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	return &Server{lim: lim.WithDefaults(), store: resp.NewStore()}, nil
}

// Limits returns the limits in force, defaults filled in.
func (s *Server) Limits() Limits { return s.lim }

// Stats returns the counters and the memory account.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	rs := s.store.Stats()
	st.UnknownCmds, st.Keys = rs.Unknown, rs.Keys
	st.Clients = s.open
	st.UsedMemory, st.UsedMemoryPeak = s.used(), s.acct.peak
	st.StoreMemory = s.store.Memory()
	st.QueryBuffers, st.OutputBuffers = s.acct.query, s.acct.output
	st.MaxMemory = s.lim.MaxMemory
	return st
}

// count adds one to the counter c picks.
func (s *Server) count(c func(*Stats) *uint64) {
	s.mu.Lock()
	*c(&s.stats)++
	s.mu.Unlock()
}

// Serve accepts connections on ln until it fails or is closed, serving
// each on its own goroutine. It returns nil when ln was closed.
func (s *Server) Serve(ln net.Listener) error {
	return s.lns.Serve(ln, func(c net.Conn) {
		s.count(func(st *Stats) *uint64 { return &st.Conns })
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.ServeConn(c)
		}()
	})
}

// Close closes the listeners given to Serve.
func (s *Server) Close() error {
	s.lns.Close()
	return nil
}

// ServeConn serves one connection until the client leaves, sends QUIT,
// breaks the protocol or a limit closes it; past MaxClients it answers
// Redis's refusal and closes at once.
func (s *Server) ServeConn(c net.Conn) {
	defer c.Close()
	cl := s.admit(c)
	if cl == nil {
		return
	}
	defer cl.leave()
	cl.serve()
}
