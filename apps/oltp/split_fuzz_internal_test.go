package oltp

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/savanna-sim/savanna/apps/appcost"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/savanna-sim/savanna/hw"
)

// cuts returns increasing cut points in (0, n], n last, drawn from seed:
// the ends of the pieces a connection might receive n bytes in.
func cuts(n int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, seed>>32))
	var out []int
	for at := 0; at < n; {
		step := 1 + rng.IntN(8)
		if rng.IntN(4) == 0 {
			step = 1 + rng.IntN(n)
		}
		at = min(at+step, n)
		out = append(out, at)
	}
	if len(out) == 0 {
		out = []int{0}
	}
	return out
}

// outcome is a parse's result, with the error as text (wrapped errors
// are distinct values).
type outcome struct {
	r   Response
	n   int
	err string
}

func responseOutcome(r Response, n int, err error) outcome {
	if err != nil {
		return outcome{err: err.Error()}
	}
	return outcome{r: r, n: n}
}

// FuzzResponseSplits checks that responses cut into random pieces and fed
// to one resuming parser, as the client's loop does, parse as they do
// from the whole buffer: same responses, same error, at the same place.
func FuzzResponseSplits(f *testing.F) {
	ok := AppendOK(nil, 1, 1, 0, statusAutocommit)
	rs, _ := AppendResultSet(nil, 1, "t", []string{"a", "b"}, [][]string{{"1", "2"}, {"3", "4"}}, statusInTrans)
	f.Add(append(append(append([]byte{}, ok...), rs...), AppendError(nil, 1, 1040, "08004", "Too many connections")...), uint64(1))
	f.Add(append(append([]byte{}, rs[:len(rs)-9]...), AppendError(nil, 5, 1213, "40001", "Deadlock")...), uint64(2))
	f.Add([]byte{1, 0, 0, 1, 2, 1, 0, 0, 2, 0, 5, 0, 0, 3, 0xfe, 0, 0, 2, 0}, uint64(3))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		var want []outcome
		for off := 0; ; {
			o := responseOutcome(ParseResponse(b[off:]))
			want = append(want, o)
			if o.err != "" {
				break
			}
			off += o.n
		}
		var got []outcome
		var p responseParser
		var in []byte
		from := 0
		ends := cuts(len(b), seed)
	pieces:
		for _, end := range ends {
			in = append(in, b[from:end]...)
			from = end
			off := 0
			for {
				r, n, err := p.parse(in[off:])
				if errors.Is(err, ErrIncomplete) && end < len(b) {
					break
				}
				o := responseOutcome(r, n, err)
				got = append(got, o)
				if o.err != "" {
					break pieces
				}
				off += n
			}
			in = append(in[:0], in[off:]...)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("in pieces ending at %v:\n got %+v\nwant %+v", ends, got, want)
		}
	})
}

// serverRun is what a thread did with its input: the bytes it answered,
// whether the connection goes on, and its counters.
type serverRun struct {
	out         []byte
	alive       bool
	queries     uint64
	protoErrors uint64
	unsupported uint64
	parsed      int64
}

// serve feeds b to a new thread in pieces ending at ends, as Run does
// with its reads, and executes what has arrived after each.
func serve(b []byte, ends []int) serverRun {
	srv := &Server{cfg: ServerConfig{}.withDefaults(), threads: map[int]*thread{}, locks: newLockTable()}
	t := &thread{srv: srv}
	t.trx.th = t
	m := &hw.CountingMeter{}
	alive, from := true, 0
	for _, end := range ends {
		for from < end {
			n := copy(t.room(), b[from:end])
			t.in = t.in[:len(t.in)+n]
			from += n
		}
		// A statement that waits (a row lock, a commit) stops the
		// input there; alone, it never waits long: settle it and go on
		// with the rest, as Run does.
		for {
			if alive = t.execute(m); !alive {
				break
			}
			if t.act != actNone {
				t.settle(m)
			}
			if !t.more {
				break
			}
			t.more = false
		}
		if !alive {
			break
		}
	}
	return serverRun{t.out, alive, srv.stats.Queries, srv.stats.ProtocolErrors, srv.stats.Unsupported, m.Counts[appcost.ParseByte]}
}

// FuzzServerSplits checks that a thread given its input in random pieces
// answers and counts as it does given it at once.
func FuzzServerSplits(f *testing.F) {
	q := AppendQuery(nil, []byte("SELECT a, b FROM t WHERE k = 1"))
	q = AppendQuery(q, []byte("UPDATE t SET a = a + 1"))
	q = AppendPacket(q, 0, []byte{ComPing})
	q = AppendPacket(q, 0, []byte{0x7f})
	f.Add(q, uint64(1))
	f.Add(append(AppendQuery(nil, []byte("COMMIT")), AppendPacket(nil, 0, []byte{ComQuit})...), uint64(2))
	f.Add(append(AppendQuery(nil, []byte("SELECT 1")), 0xff, 0xff, 0xff, 0), uint64(3))
	f.Add(append(AppendQuery(nil, []byte("BEGIN")), 0, 0, 0, 0), uint64(4))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		if len(b) > 1<<16 {
			return // a large input says no more, and the thread's output could be large
		}
		whole := serve(b, []int{len(b)})
		ends := cuts(len(b), seed)
		split := serve(b, ends)
		if !bytes.Equal(split.out, whole.out) || fmt.Sprint(split) != fmt.Sprint(whole) {
			t.Fatalf("in pieces ending at %v:\n got %+v\nwant %+v", ends, split, whole)
		}
	})
}
