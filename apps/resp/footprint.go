package resp

// Footprint is what a command will cost in memory, known before it runs,
// so that a server can refuse it, or the client, before it allocates
// (Store.Footprint).
type Footprint struct {
	// DenyOOM is Redis's DENYOOM command flag (src/commands/*.json:
	// SET, MSET, INCR, INCRBY, DECR, DECRBY): a server refuses the
	// command with -OOM when memory is short. It is set only when the
	// arity is right, as Redis checks arity first (server.c
	// processCommand).
	DenyOOM bool
	// Alloc bounds the bytes the command makes the store allocate: keys,
	// EntryOverhead, and values it copies. Values it keeps (ExecuteOwned)
	// are not in it: the caller holds them already. Memory grows by at
	// most Alloc plus the kept values.
	Alloc int64
	// Reply bounds the length of the reply Execute appends.
	Reply int
}

// smallReply bounds every reply that carries no stored or given value:
// status, integer and error replies (the longest, unknownCommand's, is
// under 400 bytes: 128 bytes of name and three arguments of 64).
const smallReply = 512

// bulkBound bounds a bulk string reply of n bytes: "$", up to 20 digits,
// CRLF, the bytes, CRLF.
func bulkBound(n int) int { return n + 25 }

// Footprint returns what Execute(args) would cost now, with value
// arguments of keep bytes or more kept (ExecuteOwned's keep; pass a
// length longer than any argument when calling Execute). A fuzz target
// checks that the reply and the growth of Memory stay within it.
func (s *Store) Footprint(args [][]byte, keep int) Footprint {
	f := Footprint{Reply: smallReply}
	if len(args) == 0 {
		f.Reply = 0
		return f
	}
	name, ok := canonical(args[0])
	if !ok {
		return f
	}
	argc := len(args) - 1
	entry := func(k, v []byte) int64 {
		n := int64(len(k) + EntryOverhead)
		if len(v) < keep {
			n += int64(len(v))
		}
		return n
	}
	switch name {
	case "GET":
		if argc == 1 {
			if v, ok := s.data[string(args[1])]; ok {
				f.Reply = max(f.Reply, bulkBound(len(v)))
			}
		}
	case "MGET":
		n := bulkBound(0)
		for _, k := range args[1:] {
			v := s.data[string(k)]
			n += bulkBound(len(v))
		}
		f.Reply = max(f.Reply, n)
	case "PING", "ECHO":
		if argc == 1 {
			f.Reply = max(f.Reply, bulkBound(len(args[1])))
		}
	case "SET":
		if argc >= 2 {
			f.DenyOOM = true
			f.Alloc = entry(args[1], args[2])
			if v, ok := s.data[string(args[1])]; ok {
				// SET ... GET returns the old value.
				f.Reply = max(f.Reply, bulkBound(len(v)))
			}
		}
	case "MSET":
		if argc >= 2 && argc%2 == 0 {
			f.DenyOOM = true
			for i := 1; i+1 < len(args); i += 2 {
				f.Alloc += entry(args[i], args[i+1])
			}
		}
	case "INCR", "DECR", "INCRBY", "DECRBY":
		byArg := name == "INCRBY" || name == "DECRBY"
		if (!byArg && argc == 1) || (byArg && argc == 2) {
			f.DenyOOM = true
			// The new value is at most 20 digits.
			f.Alloc = int64(len(args[1])+EntryOverhead) + 20
		}
	case "CONFIG":
		// Each parameter asked for adds at most one pair of short bulks.
		f.Reply = max(f.Reply, bulkBound(0)+64*argc)
	}
	return f
}
