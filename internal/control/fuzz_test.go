package control_test

import (
	"encoding/json"
	"testing"

	"github.com/savanna-sim/savanna/internal/control"
)

// FuzzParseRequest feeds the server's request parser arbitrary lines: it
// must never panic, and a request it accepts must have a command and
// survive a round trip through its own JSON.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{`{"id":1,"cmd":"show"}`, `{"cmd":"set-loglevel","level":"debug"}`, `{}`, `show`,
		`{"id":-1,"cmd":"show"}`, `{"cmd":"show"} x`, `{"cmd":"\u0000"}`, `[1,2]`, `null`, `{"id":1e99,"cmd":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := control.ParseRequest(line)
		if err != nil {
			return
		}
		if r.Cmd == "" {
			t.Fatalf("accepted %q without a command", line)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := control.ParseRequest(b)
		if err != nil || again != r {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", line, again, err, r)
		}
	})
}
