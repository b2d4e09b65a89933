package resp

import (
	"bytes"
	"strconv"
)

// Stats count what a store executed.
type Stats struct {
	Commands uint64            `json:"commands"`
	Errors   uint64            `json:"errors"`
	Keys     int               `json:"keys"`
	ByName   map[string]uint64 `json:"by_command"`
}

// Store is an in-memory key-value store that executes commands and
// appends their replies. It is not safe for concurrent use; a server
// with several threads gives each its own or locks around Execute.
type Store struct {
	data  map[string][]byte
	stats Stats
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{data: map[string][]byte{}, stats: Stats{ByName: map[string]uint64{}}}
}

// Stats returns the counters.
func (s *Store) Stats() Stats {
	st := s.stats
	st.Keys = len(s.data)
	st.ByName = make(map[string]uint64, len(s.stats.ByName))
	for k, v := range s.stats.ByName {
		st.ByName[k] = v
	}
	return st
}

// upper returns the command name in upper case without allocating for
// the common names.
func upper(b []byte) string {
	for _, name := range [...]string{"GET", "SET", "PING", "DEL", "INCR", "MSET", "MGET", "EXISTS", "CONFIG", "COMMAND", "ECHO", "FLUSHALL", "DBSIZE", "QUIT"} {
		if bytes.EqualFold(b, []byte(name)) {
			return name
		}
	}
	return string(bytes.ToUpper(b))
}

// Execute runs one command and appends its reply to out.
func (s *Store) Execute(out []byte, args [][]byte) []byte {
	if len(args) == 0 {
		return out
	}
	name := upper(args[0])
	s.stats.Commands++
	s.stats.ByName[name]++
	argc := len(args) - 1
	wrongArgs := func() []byte {
		s.stats.Errors++
		return AppendError(out, "ERR wrong number of arguments for '"+lower(name)+"' command")
	}
	switch name {
	case "PING":
		switch argc {
		case 0:
			return AppendSimple(out, "PONG")
		case 1:
			return AppendBulk(out, args[1])
		}
		return wrongArgs()
	case "ECHO":
		if argc != 1 {
			return wrongArgs()
		}
		return AppendBulk(out, args[1])
	case "SET":
		if argc < 2 {
			return wrongArgs()
		}
		s.data[string(args[1])] = append([]byte(nil), args[2]...)
		return AppendSimple(out, "OK")
	case "GET":
		if argc != 1 {
			return wrongArgs()
		}
		v, ok := s.data[string(args[1])]
		if !ok {
			return AppendNull(out)
		}
		return AppendBulk(out, v)
	case "DEL", "EXISTS":
		if argc < 1 {
			return wrongArgs()
		}
		var n int64
		for _, k := range args[1:] {
			if _, ok := s.data[string(k)]; ok {
				n++
				if name == "DEL" {
					delete(s.data, string(k))
				}
			}
		}
		return AppendInt(out, n)
	case "INCR":
		if argc != 1 {
			return wrongArgs()
		}
		v := int64(0)
		if cur, ok := s.data[string(args[1])]; ok {
			n, err := strconv.ParseInt(string(cur), 10, 64)
			if err != nil {
				s.stats.Errors++
				return AppendError(out, "ERR value is not an integer or out of range")
			}
			v = n
		}
		v++
		s.data[string(args[1])] = strconv.AppendInt(nil, v, 10)
		return AppendInt(out, v)
	case "MSET":
		if argc < 2 || argc%2 != 0 {
			return wrongArgs()
		}
		for i := 1; i+1 < len(args); i += 2 {
			s.data[string(args[i])] = append([]byte(nil), args[i+1]...)
		}
		return AppendSimple(out, "OK")
	case "MGET":
		if argc < 1 {
			return wrongArgs()
		}
		out = AppendArrayHeader(out, argc)
		for _, k := range args[1:] {
			if v, ok := s.data[string(k)]; ok {
				out = AppendBulk(out, v)
			} else {
				out = AppendNull(out)
			}
		}
		return out
	case "DBSIZE":
		return AppendInt(out, int64(len(s.data)))
	case "FLUSHALL":
		clear(s.data)
		return AppendSimple(out, "OK")
	case "CONFIG":
		// redis-benchmark asks CONFIG GET save and appendonly at start; an
		// empty list of pairs is a valid answer.
		if argc >= 1 && bytes.EqualFold(args[1], []byte("GET")) {
			return AppendArrayHeader(out, 0)
		}
		return AppendSimple(out, "OK")
	case "COMMAND":
		// redis-cli asks COMMAND DOCS at start; an empty reply is valid.
		return AppendArrayHeader(out, 0)
	case "QUIT":
		return AppendSimple(out, "OK")
	}
	s.stats.Errors++
	return AppendError(out, "ERR unknown command '"+string(args[0])+"'")
}

func lower(s string) string { return string(bytes.ToLower([]byte(s))) }
