package kv

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Stats are the server's counters.
type Stats struct {
	Conns          uint64 `json:"conns"`
	Commands       uint64 `json:"commands"`
	UnknownCmds    uint64 `json:"unknown_commands"`
	ProtocolErrors uint64 `json:"protocol_errors"`
	Keys           int    `json:"keys"`
}

// Server is the key-value server. The zero value is not usable: use New.
type Server struct {
	lim   Limits
	mu    sync.RWMutex
	data  map[string][]byte
	conns atomic.Uint64
	cmds  atomic.Uint64
	unk   atomic.Uint64
	perr  atomic.Uint64

	lnMu sync.Mutex
	lns  []net.Listener
	wg   sync.WaitGroup
}

// New returns an empty server with limits lim.
func New(lim Limits) (*Server, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	return &Server{lim: lim.WithDefaults(), data: make(map[string][]byte)}, nil
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	s.mu.RLock()
	n := len(s.data)
	s.mu.RUnlock()
	return Stats{Conns: s.conns.Load(), Commands: s.cmds.Load(), UnknownCmds: s.unk.Load(),
		ProtocolErrors: s.perr.Load(), Keys: n}
}

// Serve accepts connections on ln until it fails or is closed, serving
// each on its own goroutine. It returns nil when ln was closed.
func (s *Server) Serve(ln net.Listener) error {
	s.lnMu.Lock()
	s.lns = append(s.lns, ln)
	s.lnMu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.conns.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.ServeConn(c)
		}()
	}
}

// Close closes the listeners given to Serve.
func (s *Server) Close() error {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	for _, ln := range s.lns {
		_ = ln.Close()
	}
	s.lns = nil
	return nil
}

// ServeConn serves one connection until the client leaves, sends QUIT
// or breaks the protocol.
func (s *Server) ServeConn(c net.Conn) {
	defer c.Close()
	rd := NewReader(bufio.NewReaderSize(c, 16<<10), s.lim)
	w := bufio.NewWriterSize(c, 16<<10)
	var args [][]byte
	for {
		var err error
		args, err = rd.ReadCommand(args)
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) {
				s.perr.Add(1)
				writeError(w, "ERR "+pe.Error())
			}
			_ = w.Flush()
			return
		}
		if len(args) == 0 {
			continue
		}
		s.cmds.Add(1)
		if quit := s.exec(w, args); quit {
			_ = w.Flush()
			return
		}
		// Pipelining: answer a batch at once, flushing when the client
		// has nothing more in flight.
		if rd.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

func eq(b []byte, s string) bool { return strings.EqualFold(string(b), s) }

func (s *Server) wrongArgs(w *bufio.Writer, cmd []byte) {
	writeError(w, "ERR wrong number of arguments for '"+strings.ToLower(string(cmd))+"' command")
}

// exec runs one command and writes its reply; it reports QUIT.
func (s *Server) exec(w *bufio.Writer, args [][]byte) bool {
	cmd := args[0]
	switch {
	case eq(cmd, "PING"):
		switch len(args) {
		case 1:
			writeSimple(w, "PONG")
		case 2:
			writeBulk(w, args[1])
		default:
			s.wrongArgs(w, cmd)
		}
	case eq(cmd, "ECHO"):
		if len(args) != 2 {
			s.wrongArgs(w, cmd)
			break
		}
		writeBulk(w, args[1])
	case eq(cmd, "SET"):
		s.set(w, args)
	case eq(cmd, "GET"):
		if len(args) != 2 {
			s.wrongArgs(w, cmd)
			break
		}
		s.mu.RLock()
		v, ok := s.data[string(args[1])]
		s.mu.RUnlock()
		if !ok {
			v = nil
		} else if v == nil {
			v = []byte{}
		}
		writeBulk(w, v)
	case eq(cmd, "DEL"), eq(cmd, "UNLINK"):
		if len(args) < 2 {
			s.wrongArgs(w, cmd)
			break
		}
		n := int64(0)
		s.mu.Lock()
		for _, k := range args[1:] {
			if _, ok := s.data[string(k)]; ok {
				delete(s.data, string(k))
				n++
			}
		}
		s.mu.Unlock()
		writeInt(w, n)
	case eq(cmd, "EXISTS"):
		if len(args) < 2 {
			s.wrongArgs(w, cmd)
			break
		}
		n := int64(0)
		s.mu.RLock()
		for _, k := range args[1:] {
			if _, ok := s.data[string(k)]; ok {
				n++
			}
		}
		s.mu.RUnlock()
		writeInt(w, n)
	case eq(cmd, "INCR"), eq(cmd, "DECR"), eq(cmd, "INCRBY"), eq(cmd, "DECRBY"):
		s.incr(w, args)
	case eq(cmd, "MSET"):
		if len(args) < 3 || len(args)%2 == 0 {
			s.wrongArgs(w, cmd)
			break
		}
		s.mu.Lock()
		for i := 1; i < len(args); i += 2 {
			s.data[string(args[i])] = args[i+1]
		}
		s.mu.Unlock()
		writeSimple(w, "OK")
	case eq(cmd, "MGET"):
		if len(args) < 2 {
			s.wrongArgs(w, cmd)
			break
		}
		writeArrayLen(w, len(args)-1)
		s.mu.RLock()
		for _, k := range args[1:] {
			v, ok := s.data[string(k)]
			if ok && v == nil {
				v = []byte{}
			}
			writeBulk(w, v)
		}
		s.mu.RUnlock()
	case eq(cmd, "DBSIZE"):
		s.mu.RLock()
		n := len(s.data)
		s.mu.RUnlock()
		writeInt(w, int64(n))
	case eq(cmd, "FLUSHALL"), eq(cmd, "FLUSHDB"):
		s.mu.Lock()
		clear(s.data)
		s.mu.Unlock()
		writeSimple(w, "OK")
	case eq(cmd, "SELECT"):
		if len(args) != 2 {
			s.wrongArgs(w, cmd)
		} else if string(args[1]) != "0" {
			writeError(w, "ERR DB index is out of range")
		} else {
			writeSimple(w, "OK")
		}
	case eq(cmd, "QUIT"):
		writeSimple(w, "OK")
		return true
	case eq(cmd, "CONFIG"):
		s.config(w, args)
	case eq(cmd, "COMMAND"):
		// redis-cli asks for COMMAND DOCS to offer hints and
		// redis-benchmark may ask COMMAND; an empty array is a valid
		// (if unhelpful) answer to both.
		if len(args) >= 2 && eq(args[1], "COUNT") {
			writeInt(w, 0)
		} else {
			writeArrayLen(w, 0)
		}
	case eq(cmd, "CLIENT"), eq(cmd, "READONLY"):
		writeSimple(w, "OK")
	default:
		s.unk.Add(1)
		var b strings.Builder
		b.WriteString("ERR unknown command '")
		b.WriteString(printable(cmd, 128))
		b.WriteString("', with args beginning with: ")
		for _, a := range args[1:min(len(args), 4)] {
			b.WriteString("'")
			b.WriteString(printable(a, 64))
			b.WriteString("' ")
		}
		writeError(w, b.String())
	}
	return false
}

// printable keeps an error reply on one line: control bytes would break
// the RESP framing.
func printable(b []byte, max int) string {
	if len(b) > max {
		b = b[:max]
	}
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c == 0x7f {
			c = ' '
		}
		out[i] = c
	}
	return string(out)
}

// set handles SET key value [NX|XX] [EX s|PX ms|KEEPTTL|GET]; expiry
// options are accepted and ignored (the server keeps no TTLs).
func (s *Server) set(w *bufio.Writer, args [][]byte) {
	if len(args) < 3 {
		s.wrongArgs(w, args[0])
		return
	}
	nx, xx, get := false, false, false
	for i := 3; i < len(args); i++ {
		switch {
		case eq(args[i], "NX"):
			nx = true
		case eq(args[i], "XX"):
			xx = true
		case eq(args[i], "GET"):
			get = true
		case eq(args[i], "KEEPTTL"):
		case eq(args[i], "EX"), eq(args[i], "PX"), eq(args[i], "EXAT"), eq(args[i], "PXAT"):
			if i+1 >= len(args) {
				writeError(w, "ERR syntax error")
				return
			}
			if n, err := strconv.ParseInt(string(args[i+1]), 10, 64); err != nil || n <= 0 {
				writeError(w, "ERR invalid expire time in 'set' command")
				return
			}
			i++
		default:
			writeError(w, "ERR syntax error")
			return
		}
	}
	if nx && xx {
		writeError(w, "ERR syntax error")
		return
	}
	k := string(args[1])
	s.mu.Lock()
	old, had := s.data[k]
	ok := !(nx && had) && !(xx && !had)
	if ok {
		s.data[k] = args[2]
	}
	s.mu.Unlock()
	switch {
	case get && had:
		if old == nil {
			old = []byte{}
		}
		writeBulk(w, old)
	case get:
		writeBulk(w, nil)
	case ok:
		writeSimple(w, "OK")
	default:
		writeBulk(w, nil)
	}
}

func (s *Server) incr(w *bufio.Writer, args [][]byte) {
	cmd := args[0]
	by := int64(1)
	switch {
	case eq(cmd, "INCR"), eq(cmd, "DECR"):
		if len(args) != 2 {
			s.wrongArgs(w, cmd)
			return
		}
	default:
		if len(args) != 3 {
			s.wrongArgs(w, cmd)
			return
		}
		n, err := strconv.ParseInt(string(args[2]), 10, 64)
		if err != nil {
			writeError(w, "ERR value is not an integer or out of range")
			return
		}
		by = n
	}
	if eq(cmd, "DECR") || eq(cmd, "DECRBY") {
		if by == -by && by != 0 {
			writeError(w, "ERR decrement would overflow")
			return
		}
		by = -by
	}
	k := string(args[1])
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := int64(0)
	if v, ok := s.data[k]; ok {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			writeError(w, "ERR value is not an integer or out of range")
			return
		}
		cur = n
	}
	if (by > 0 && cur > 1<<63-1-by) || (by < 0 && cur < -1<<63-by) {
		writeError(w, "ERR increment or decrement would overflow")
		return
	}
	cur += by
	s.data[k] = strconv.AppendInt(nil, cur, 10)
	writeInt(w, cur)
}

// config answers CONFIG GET for the parameters redis-benchmark reads at
// start ("save" and "appendonly") and returns an empty list for others;
// CONFIG SET and RESETSTAT are accepted.
func (s *Server) config(w *bufio.Writer, args [][]byte) {
	if len(args) < 2 {
		s.wrongArgs(w, args[0])
		return
	}
	switch {
	case eq(args[1], "GET"):
		if len(args) < 3 {
			s.wrongArgs(w, args[0])
			return
		}
		var pairs [][2]string
		for _, p := range args[2:] {
			switch {
			case eq(p, "save"):
				pairs = append(pairs, [2]string{"save", ""})
			case eq(p, "appendonly"):
				pairs = append(pairs, [2]string{"appendonly", "no"})
			case eq(p, "databases"):
				pairs = append(pairs, [2]string{"databases", "1"})
			}
		}
		writeArrayLen(w, 2*len(pairs))
		for _, kv := range pairs {
			writeBulk(w, []byte(kv[0]))
			writeBulk(w, []byte(kv[1]))
		}
	case eq(args[1], "SET"), eq(args[1], "RESETSTAT"):
		writeSimple(w, "OK")
	default:
		writeError(w, "ERR unknown subcommand '"+printable(args[1], 64)+"'. Try CONFIG HELP.")
	}
}
