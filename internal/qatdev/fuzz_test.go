package qatdev

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeRequest feeds the socket's message decoder (the frame reader
// and DecodeRequest) arbitrary bytes: it must return an error or a
// request that passes its own checks and survives a round trip, and never
// panic.
func FuzzDecodeRequest(f *testing.F) {
	for _, r := range []Request{
		{Op: OpHello, Version: ProtocolVersion},
		{Op: OpAttach, Node: -1},
		{Op: OpAlloc, Size: 65536},
		{Op: OpEnqueue, Device: "qat0", QP: 3, Ops: []WireOp{{ID: 1, Algo: 1, Level: 6, Flush: 3, SrcLen: 100, DstOff: 4096, DstLen: 4096}}},
		{Op: OpDequeue, Device: "qat0", Max: 8},
		{Op: OpWait, Timeout: 1000},
		{Op: OpFault, Kind: "engine_error", Rate: 0.5},
		{Op: OpClear},
	} {
		b, err := frame(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0, 0, 0, 20, '{', '"', 'o', 'p', '"', ':', '1', '}'})
	f.Fuzz(func(t *testing.T, in []byte) {
		body, err := readFrame(bytes.NewReader(in))
		if err != nil {
			return
		}
		r, err := DecodeRequest(body)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a reason")
			}
			return
		}
		if err := r.validate(); err != nil {
			t.Fatalf("decoded a request its own check refuses: %v", err)
		}
		for _, o := range r.Ops {
			if o.SrcOff < 0 || o.SrcLen < 0 || o.DstOff < 0 || o.DstLen < 0 {
				t.Fatalf("negative offset or length passed: %+v", o)
			}
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := DecodeRequest(b)
		if err != nil {
			t.Fatalf("a decoded request does not decode again: %v (%s)", err, b)
		}
		if !reflect.DeepEqual(normal(r), normal(again)) {
			t.Fatalf("round trip changed the request: %+v -> %+v", r, again)
		}
	})
}

// normal makes an empty ops list and a missing one the same.
func normal(r Request) Request {
	if len(r.Ops) == 0 {
		r.Ops = nil
	}
	return r
}

// FuzzRegionAlloc checks the memfd allocator against a simple model: no
// two live regions overlap, every region is inside the memfd, and
// freeing everything gives back one span of the whole size.
func FuzzRegionAlloc(f *testing.F) {
	f.Add([]byte{10, 20, 0x80, 30, 0x81, 5})
	f.Fuzz(func(t *testing.T, in []byte) {
		const size = 64 << 10
		var a regionAlloc
		a.init(size)
		type reg struct{ off, n int64 }
		var live []reg
		for _, b := range in {
			if b&0x80 != 0 && len(live) > 0 {
				i := int(b&0x7f) % len(live)
				a.put(live[i].off, live[i].n)
				live = append(live[:i], live[i+1:]...)
				continue
			}
			n := int64(b&0x7f)*97 + 1
			off, ok := a.get(n)
			if !ok {
				continue
			}
			if off < 0 || off+n > size {
				t.Fatalf("region [%d,+%d) outside the memfd", off, n)
			}
			for _, l := range live {
				if off < l.off+l.n && l.off < off+n {
					t.Fatalf("region [%d,+%d) overlaps [%d,+%d)", off, n, l.off, l.n)
				}
			}
			live = append(live, reg{off, n})
		}
		for _, l := range live {
			a.put(l.off, l.n)
		}
		if len(a.free) != 1 || a.free[0] != (span{0, size}) {
			t.Fatalf("after freeing everything: %v", a.free)
		}
	})
}
