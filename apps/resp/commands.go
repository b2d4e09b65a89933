package resp

import "strconv"

// set handles SET key value [NX|XX] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL]
// (https://redis.io/docs/latest/commands/set/); expiry options are
// checked and ignored, as the store keeps no TTLs.
func (s *Store) set(out []byte, args [][]byte) []byte {
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
				return s.error(out, "ERR syntax error")
			}
			if n, err := strconv.ParseInt(string(args[i+1]), 10, 64); err != nil || n <= 0 {
				return s.error(out, "ERR invalid expire time in 'set' command")
			}
			i++
		default:
			return s.error(out, "ERR syntax error")
		}
	}
	if nx && xx {
		return s.error(out, "ERR syntax error")
	}
	k := string(args[1])
	old, had := s.data[k]
	ok := !(nx && had) && !(xx && !had)
	if ok {
		s.put(k, s.value(args[2]))
	}
	switch {
	case get && had:
		return AppendBulk(out, old)
	case ok && !get:
		return AppendSimple(out, "OK")
	}
	// SET ... GET of a missing key, or a refused NX/XX: the null reply.
	return AppendNull(out)
}

// incr handles INCR, DECR (by nil) and INCRBY, DECRBY (by the argument),
// refusing values that are not 64-bit integers and results that would
// overflow, as Redis does (t_string.c incrDecrCommand).
func (s *Store) incr(out []byte, name string, key, byArg []byte) []byte {
	by := int64(1)
	if byArg != nil {
		n, err := strconv.ParseInt(string(byArg), 10, 64)
		if err != nil {
			return s.error(out, "ERR value is not an integer or out of range")
		}
		by = n
	}
	if name == "DECR" || name == "DECRBY" {
		if by == -by && by != 0 {
			return s.error(out, "ERR decrement would overflow")
		}
		by = -by
	}
	k := string(key)
	cur := int64(0)
	if v, ok := s.data[k]; ok {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return s.error(out, "ERR value is not an integer or out of range")
		}
		cur = n
	}
	if (by > 0 && cur > 1<<63-1-by) || (by < 0 && cur < -1<<63-by) {
		return s.error(out, "ERR increment or decrement would overflow")
	}
	cur += by
	s.put(k, strconv.AppendInt(nil, cur, 10))
	return AppendInt(out, cur)
}

// config answers CONFIG GET for the parameters redis-benchmark reads at
// start ("save" and "appendonly", and "databases") and returns an empty
// list for others; CONFIG SET and RESETSTAT are accepted.
func (s *Store) config(out []byte, args [][]byte) []byte {
	switch {
	case eq(args[1], "GET"):
		if len(args) < 3 {
			return s.error(out, "ERR wrong number of arguments for 'config' command")
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
		out = AppendArrayHeader(out, 2*len(pairs))
		for _, kv := range pairs {
			out = AppendBulk(out, []byte(kv[0]))
			out = AppendBulk(out, []byte(kv[1]))
		}
		return out
	case eq(args[1], "SET"), eq(args[1], "RESETSTAT"):
		return AppendSimple(out, "OK")
	}
	return s.error(out, "ERR unknown subcommand '"+printable(args[1], 64)+"'. Try CONFIG HELP.")
}
