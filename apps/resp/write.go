package resp

import "strconv"

// AppendSimple appends +s\r\n.
func AppendSimple(b []byte, s string) []byte {
	b = append(b, '+')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendError appends -msg\r\n.
func AppendError(b []byte, msg string) []byte {
	b = append(b, '-')
	b = append(b, msg...)
	return append(b, '\r', '\n')
}

// AppendInt appends :n\r\n.
func AppendInt(b []byte, n int64) []byte {
	b = append(b, ':')
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// AppendBulk appends a bulk string.
func AppendBulk(b, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendNull appends the null bulk string $-1\r\n.
func AppendNull(b []byte) []byte { return append(b, "$-1\r\n"...) }

// AppendArrayHeader appends *n\r\n.
func AppendArrayHeader(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// AppendCommand appends a command as an array of bulk strings, as
// clients send it.
func AppendCommand(b []byte, args ...[]byte) []byte {
	b = AppendArrayHeader(b, len(args))
	for _, a := range args {
		b = AppendBulk(b, a)
	}
	return b
}
