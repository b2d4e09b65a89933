package resp_test

import (
	"reflect"
	"testing"

	"github.com/savanna-sim/savanna/apps/resp"
)

// FuzzParser feeds the same input to the resumable parser in random
// pieces and to the whole-buffer parse: the commands and the way the
// input ends (consumed, incomplete, or the same protocol error) must
// agree. Each command then runs on a store, whose reply and memory
// growth must stay within its Footprint.
func FuzzParser(f *testing.F) {
	for _, s := range []string{
		"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20\r\n01234567890123456789\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"PING\r\nSET a  b\r\n\r\nMGET a b\n",
		"*-1\r\n*0\r\n*1\r\n$-1\r\n",
		"*1\r\n$4\r\nPINGxx",
		"*2\n$4\nECHO\n$3\nabc\r\n",
		"INCR n\r\nINCRBY n 5\r\nSET k v GET\r\n",
		"A \u00a0B\u0085C\r\n",
	} {
		f.Add([]byte(s), uint64(1))
	}
	lim := resp.Limits{MaxArgs: 8, MaxBulk: 64, MaxInline: 32}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		want := wholeParse(in, lim)
		var cuts []int
		x := seed | 1
		for range 16 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			cuts = append(cuts, int(x%9)+1)
		}
		m := &meter{limit: 1 << 20}
		p := resp.NewParser(lim, m)
		resp.SetBigArg(p, 16)
		got := feedParse(p, in, cuts)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("split %v gives %+v, whole buffer %+v", cuts, got, want)
		}
		p.Free()
		if m.held != 0 {
			t.Fatalf("%d bytes still reserved after Free", m.held)
		}
		s := resp.NewStore()
		for _, c := range want.cmds {
			args := make([][]byte, len(c))
			for i, a := range c {
				args[i] = []byte(a)
			}
			if len(args) == 0 {
				continue
			}
			fp := s.Footprint(args, 16)
			kept := int64(0)
			for _, a := range args[1:] {
				if len(a) >= 16 {
					kept += int64(len(a))
				}
			}
			before := s.Memory()
			out := s.ExecuteOwned(nil, args, 16)
			if len(out) > fp.Reply {
				t.Fatalf("%q: reply of %d bytes, bound %d", c, len(out), fp.Reply)
			}
			if g := s.Memory() - before; g > fp.Alloc+kept {
				t.Fatalf("%q: memory grew %d, bound %d+%d", c, g, fp.Alloc, kept)
			}
		}
	})
}
