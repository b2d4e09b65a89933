package resp

import (
	"bytes"
	"strings"
)

// Stats count what a store executed.
type Stats struct {
	Commands uint64 `json:"commands"`
	// Errors counts error replies (wrong arity, syntax, type, unknown
	// command).
	Errors uint64 `json:"errors"`
	// Unknown counts commands the store does not implement; they are
	// not in ByName, so a client cannot grow it without bound.
	Unknown uint64            `json:"unknown_commands"`
	Keys    int               `json:"keys"`
	ByName  map[string]uint64 `json:"by_command"`
}

// Store is an in-memory key-value store that executes commands and
// appends their replies: the subset of Redis that redis-benchmark and
// redis-cli use (see commandNames). It is not safe for concurrent use; a
// server with several threads gives each its own or locks around
// Execute. It keeps no TTLs: expiry options are checked and ignored.
type Store struct {
	data map[string][]byte
	// mem is Memory: the bytes of keys and values, and EntryOverhead
	// for each entry.
	mem int64
	// keep is the length from which Execute keeps a value argument
	// instead of copying it (ExecuteOwned); copy always, otherwise.
	keep  int
	stats Stats
}

// EntryOverhead is what Memory charges for each key beyond its key's and
// value's bytes: an estimate of a Go map entry of string key and slice
// value (its 16-byte string and 24-byte slice headers, a share of the
// bucket's tophash and overflow pointer) and the map's spare room.
const EntryOverhead = 64

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{data: map[string][]byte{}, keep: maxInt, stats: Stats{ByName: map[string]uint64{}}}
}

const maxInt = int(^uint(0) >> 1)

// Memory returns the bytes the store holds: its keys and values, and
// EntryOverhead per key. It is the store's own account (lengths, not
// the allocator's size classes or garbage the collector has not yet
// reclaimed), which a server adds to its buffers to enforce maxmemory.
func (s *Store) Memory() int64 { return s.mem }

// put stores v under k, keeping Memory.
func (s *Store) put(k string, v []byte) {
	if old, ok := s.data[k]; ok {
		s.mem -= int64(len(k) + len(old) + EntryOverhead)
	}
	s.data[k] = v
	s.mem += int64(len(k) + len(v) + EntryOverhead)
}

// remove deletes k, keeping Memory, and reports whether it was there.
func (s *Store) remove(k []byte) bool {
	old, ok := s.data[string(k)]
	if ok {
		s.mem -= int64(len(k) + len(old) + EntryOverhead)
		delete(s.data, string(k))
	}
	return ok
}

// value is what the store keeps for a value argument: the argument
// itself when the caller gave it away (ExecuteOwned), else a copy.
func (s *Store) value(v []byte) []byte {
	if len(v) >= s.keep {
		return v[:len(v):len(v)]
	}
	return append([]byte(nil), v...)
}

// ExecuteOwned is Execute for a caller that gives the store its value
// arguments of keep bytes or more: the store keeps those allocations as
// the values instead of copying them, so the caller must not touch them
// again (a Parser forgets its big arguments at Next, which makes
// resp.BigArg the keep a Parser's caller passes).
func (s *Store) ExecuteOwned(out []byte, args [][]byte, keep int) []byte {
	s.keep = max(keep, 0)
	defer func() { s.keep = maxInt }()
	return s.Execute(out, args)
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

// commandNames are the commands Execute implements, most frequent first.
func commandNames() [22]string {
	return [...]string{"GET", "SET", "PING", "INCR", "MGET", "MSET", "DEL", "EXISTS",
		"INCRBY", "DECR", "DECRBY", "UNLINK", "ECHO", "DBSIZE", "FLUSHALL", "FLUSHDB",
		"SELECT", "QUIT", "CONFIG", "COMMAND", "CLIENT", "READONLY"}
}

// canonical returns the command name in upper case, without allocating,
// and false when Execute does not know it.
func canonical(b []byte) (string, bool) {
	for _, name := range commandNames() {
		if bytes.EqualFold(b, []byte(name)) {
			return name, true
		}
	}
	return "", false
}

// Execute runs one command and appends its reply to out.
func (s *Store) Execute(out []byte, args [][]byte) []byte {
	if len(args) == 0 {
		return out
	}
	s.stats.Commands++
	name, ok := canonical(args[0])
	if !ok {
		s.stats.Unknown++
		return s.error(out, unknownCommand(args))
	}
	s.stats.ByName[name]++
	argc := len(args) - 1
	switch name {
	case "PING":
		switch argc {
		case 0:
			return AppendSimple(out, "PONG")
		case 1:
			return AppendBulk(out, args[1])
		}
	case "ECHO":
		if argc == 1 {
			return AppendBulk(out, args[1])
		}
	case "SET":
		if argc >= 2 {
			return s.set(out, args)
		}
	case "GET":
		if argc == 1 {
			if v, ok := s.data[string(args[1])]; ok {
				return AppendBulk(out, v)
			}
			return AppendNull(out)
		}
	case "DEL", "UNLINK", "EXISTS":
		if argc >= 1 {
			var n int64
			for _, k := range args[1:] {
				if name == "EXISTS" {
					if _, ok := s.data[string(k)]; ok {
						n++
					}
				} else if s.remove(k) {
					n++
				}
			}
			return AppendInt(out, n)
		}
	case "INCR", "DECR":
		if argc == 1 {
			return s.incr(out, name, args[1], nil)
		}
	case "INCRBY", "DECRBY":
		if argc == 2 {
			return s.incr(out, name, args[1], args[2])
		}
	case "MSET":
		if argc >= 2 && argc%2 == 0 {
			for i := 1; i+1 < len(args); i += 2 {
				s.put(string(args[i]), s.value(args[i+1]))
			}
			return AppendSimple(out, "OK")
		}
	case "MGET":
		if argc >= 1 {
			out = AppendArrayHeader(out, argc)
			for _, k := range args[1:] {
				if v, ok := s.data[string(k)]; ok {
					out = AppendBulk(out, v)
				} else {
					out = AppendNull(out)
				}
			}
			return out
		}
	case "DBSIZE":
		return AppendInt(out, int64(len(s.data)))
	case "FLUSHALL", "FLUSHDB":
		clear(s.data)
		s.mem = 0
		return AppendSimple(out, "OK")
	case "SELECT":
		// One database, as Redis Cluster has: only index 0 exists.
		if argc == 1 {
			if string(args[1]) != "0" {
				return s.error(out, "ERR DB index is out of range")
			}
			return AppendSimple(out, "OK")
		}
	case "QUIT":
		// The server closes the connection after this reply.
		return AppendSimple(out, "OK")
	case "CONFIG":
		if argc >= 1 {
			return s.config(out, args)
		}
	case "COMMAND":
		// redis-cli asks COMMAND DOCS to offer hints and redis-benchmark
		// may ask COMMAND; an empty array is a valid (if unhelpful)
		// answer to both.
		if argc >= 1 && eq(args[1], "COUNT") {
			return AppendInt(out, 0)
		}
		return AppendArrayHeader(out, 0)
	case "CLIENT", "READONLY":
		// Client bookkeeping (CLIENT SETNAME/SETINFO) the store has no
		// use for.
		return AppendSimple(out, "OK")
	}
	return s.error(out, "ERR wrong number of arguments for '"+strings.ToLower(name)+"' command")
}

// error appends an error reply and counts it.
func (s *Store) error(out []byte, msg string) []byte {
	s.stats.Errors++
	return AppendError(out, msg)
}

func eq(b []byte, s string) bool { return bytes.EqualFold(b, []byte(s)) }

// unknownCommand is Redis's reply text for a command it does not know
// (server.c processCommand), naming the first three arguments.
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(printable(args[0], 128))
	b.WriteString("', with args beginning with: ")
	for _, a := range args[1:min(len(args), 4)] {
		b.WriteString("'")
		b.WriteString(printable(a, 64))
		b.WriteString("' ")
	}
	return b.String()
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

// CommandName returns the upper-case name of the command args[0] names,
// without allocating, and false when Execute does not know it (or args
// is empty): a server prices each command by its name.
func CommandName(args [][]byte) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	return canonical(args[0])
}
