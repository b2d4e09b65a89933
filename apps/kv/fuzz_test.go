package kv_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/savanna-sim/savanna/apps/kv"
)

// FuzzReadCommand feeds arbitrary bytes to the RESP parser: it must never
// panic, never return more than the limits allow, and stop at EOF.
func FuzzReadCommand(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"PING\r\nSET a b\r\n",
		"*-1\r\n*0\r\n",
		"*1\r\n$-1\r\n",
		"*2\r\n$99999999999\r\n",
		"*1\r\n$3\r\nab",
		"\r\n\r\n",
		"*2\r\n$4\r\nECHO\r\n$600\r\n" + string(bytes.Repeat([]byte("x"), 600)) + "\r\n",
	} {
		f.Add([]byte(s))
	}
	lim := kv.Limits{MaxArgs: 64, MaxBulk: 1024, MaxInline: 256}
	f.Fuzz(func(t *testing.T, in []byte) {
		rd := kv.NewReader(iotest.OneByteReader(bytes.NewReader(in)), lim)
		for i := 0; i <= len(in); i++ {
			args, err := rd.ReadCommand()
			if len(args) > lim.MaxArgs {
				t.Fatalf("%d args, limit %d", len(args), lim.MaxArgs)
			}
			for _, a := range args {
				if len(a) > lim.MaxBulk && len(a) > lim.MaxInline {
					t.Fatalf("arg of %d bytes", len(a))
				}
			}
			if err != nil {
				var pe *kv.ProtocolError
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.As(err, &pe) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
		}
		t.Fatalf("parser did not reach the end of %d bytes", len(in))
	})
}
