package oltp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/savanna-sim/savanna/apps/oltp"
)

// FuzzParseResponse feeds the client's response parser arbitrary bytes:
// it must return a response, ErrIncomplete or ErrMalformed, never panic,
// and never claim more bytes than it was given.
func FuzzParseResponse(f *testing.F) {
	f.Add(oltp.AppendOK(nil, 1, 1, 0, 2))
	f.Add(oltp.AppendError(nil, 1, 1040, "08004", "Too many connections"))
	rs, _ := oltp.AppendResultSet(nil, 1, "t", []string{"a", "b"}, [][]string{{"1", "2"}}, 1)
	f.Add(rs)
	f.Add([]byte{0xff, 0xff, 0xff, 0})
	f.Add([]byte{1, 0, 0, 1, 0xfe})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, err := oltp.ParseResponse(b)
		if err != nil {
			if !errors.Is(err, oltp.ErrIncomplete) && !errors.Is(err, oltp.ErrMalformed) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		if r.Kind == oltp.ResponseResultSet && r.Columns == 0 {
			t.Fatalf("a result set without columns")
		}
	})
}

// FuzzServerInput feeds the server's packet and command parsers and the
// statement classifier arbitrary client bytes.
func FuzzServerInput(f *testing.F) {
	f.Add(oltp.AppendQuery(nil, []byte("SELECT a, b FROM t WHERE k = 1")))
	f.Add(oltp.AppendQuery(nil, []byte("/* x */ UPDATE t SET a = a + 1")))
	f.Add(oltp.AppendPacket(nil, 0, []byte{oltp.ComQuit}))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{3, 0, 0, 0, 3, '/', '*'})
	f.Add(oltp.AppendQuery(nil, []byte("SELECT d_tax FROM bmsql_district WHERE d_w_id = 3 AND d_id = 7 FOR UPDATE")))
	f.Add(oltp.AppendQuery(nil, []byte("DELETE FROM x WHERE a = 1")))
	f.Add(oltp.AppendQuery(nil, []byte("UPDATE WHERE =")))
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			p, n, err := oltp.ParsePacket(b)
			if err != nil {
				return
			}
			b = b[n:]
			cmd, err := oltp.ParseCommand(p)
			if err != nil {
				continue
			}
			c := oltp.Classify(cmd.Arg)
			if c.String() == "" {
				t.Fatalf("class %d has no name", c)
			}
			if oltp.SelectColumns(cmd.Arg) < 1 {
				t.Fatalf("fewer than one column")
			}
			if table, key, ok := oltp.LockTarget(cmd.Arg, c); ok && (table == "" || !strings.HasPrefix(key, table+":")) {
				t.Fatalf("lock key %q does not name its table %q", key, table)
			}
		}
	})
}
