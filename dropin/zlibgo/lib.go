//go:build cgo

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/cgo"
	"sync"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/zlibshim"
)

// library is the shim of one OS process. A C caller has no Go value to
// hold it, so it lives in the one package variable, lib; its mutex
// serialises the calls, because a zlibshim.Process is not safe for
// concurrent use and C threads may call from several streams at once.
type library struct {
	mu      sync.Mutex
	started bool
	p       *zlibshim.Process
	kind    string
	// serviceError says why the accelerator the environment asked for is
	// not used (the process then runs in software).
	serviceError string
	initErrors   uint64
}

var lib library

// process returns the process's shim, making it on first use. Called
// with l.mu held.
func (l *library) process() (*zlibshim.Process, error) {
	if l.started {
		if l.p == nil {
			return nil, errors.New("zlibgo: the shim could not be made in this process")
		}
		return l.p, nil
	}
	l.started = true
	pid := hw.ProcessID(os.Getpid())
	cfg := zlibshim.Config{}
	e := readEnv()
	pol, err := zlibshim.ParsePolicy(e.policy)
	if err != nil {
		// A bad value must not silently change what the program does:
		// no stream is served, and stderr says why.
		fmt.Fprintf(os.Stderr, "savanna zlib drop-in: SAVANNA_ZLIB_POLICY: %v\n", err)
		return nil, fmt.Errorf("zlibgo: SAVANNA_ZLIB_POLICY: %w", err)
	}
	cfg.Policy = pol
	s, err := chooseService(e, pid)
	if err != nil {
		l.serviceError = err.Error()
		fmt.Fprintf(os.Stderr, "savanna zlib drop-in: %v; running the shim in software\n", err)
	}
	if s.svc == nil && (cfg.Policy != zlibshim.PolicyHardwareOnly || e.software) {
		// No accelerator: software, unless hardware-only was asked for
		// and the device could not be reached, which NewProcess refuses
		// (every stream then fails, as that policy promises).
		cfg.Policy = zlibshim.PolicySoftwareOnly
	}
	p, err := zlibshim.NewProcess(s.svc, s.pid, s.meter, cfg)
	if err != nil {
		return nil, fmt.Errorf("zlibgo: %w", err)
	}
	l.p, l.kind = p, s.kind
	return p, nil
}

// zlib's return codes (zlib.h).
const (
	zOK          = 0
	zStreamEnd   = 1
	zStreamError = -2
	zDataError   = -3
	zMemError    = -4
	zBufError    = -5
)

// code is zlib's return code for a shim error. ErrHardware (only under
// hardware-only) has no zlib code; Z_STREAM_ERROR says the stream is dead.
func code(err error) int {
	switch {
	case err == nil:
		return zOK
	case errors.Is(err, zlibshim.ErrStreamEnd):
		return zStreamEnd
	case errors.Is(err, zlibshim.ErrBuf):
		return zBufError
	case errors.Is(err, zlibshim.ErrData):
		return zDataError
	}
	return zStreamError
}

// flushOf maps zlib's flush values (zlib.h) to the shim's. Z_PARTIAL_FLUSH
// and Z_BLOCK ask for less than a sync flush (all output so far, not
// necessarily byte-aligned); a sync flush gives all they promise.
func flushOf(f int) (zlibshim.Flush, bool) {
	switch f {
	case 0:
		return zlibshim.NoFlush, true
	case 1, 2, 5: // Z_PARTIAL_FLUSH, Z_SYNC_FLUSH, Z_BLOCK
		return zlibshim.SyncFlush, true
	case 3:
		return zlibshim.FullFlush, true
	case 4:
		return zlibshim.Finish, true
	}
	return 0, false
}

func (l *library) deflateInit(level, windowBits, memLevel, strategy int) (uintptr, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.process()
	if err != nil {
		l.initErrors++
		return 0, zStreamError
	}
	d, err := p.DeflateInit2(level, zlibshim.Deflated, windowBits, memLevel, zlibshim.Strategy(strategy))
	if err != nil {
		l.initErrors++
		return 0, zStreamError
	}
	return uintptr(cgo.NewHandle(d)), zOK
}

func deflaterOf(h uintptr) (*zlibshim.Deflater, bool) {
	if h == 0 {
		return nil, false
	}
	d, ok := cgo.Handle(h).Value().(*zlibshim.Deflater)
	return d, ok
}

// deflate runs one deflate call over C memory: in and out are slices of
// the caller's buffers, dropped from the Deflater before returning so
// that no Go value keeps pointing into C memory between calls.
func (l *library) deflate(h uintptr, in, out []byte, flush int) (consumed, produced int, rc int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := deflaterOf(h)
	f, fok := flushOf(flush)
	if !ok || !fok {
		return 0, 0, zStreamError
	}
	d.NextIn, d.NextOut = in, out
	err := d.Deflate(f)
	consumed, produced = len(in)-len(d.NextIn), len(out)-len(d.NextOut)
	d.NextIn, d.NextOut = nil, nil
	return consumed, produced, code(err)
}

func (l *library) deflateReset(h uintptr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := deflaterOf(h)
	if !ok {
		return zStreamError
	}
	return code(d.DeflateReset())
}

func (l *library) deflateEnd(h uintptr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := deflaterOf(h)
	if !ok {
		return zStreamError
	}
	cgo.Handle(h).Delete()
	return code(d.DeflateEnd())
}

// bound is the shim's worst case for sourceLen bytes deflated with one
// Finish after init or reset. Each hardware request's output is bounded
// by its pinned destination (request + 1/8 + 1 KiB, docs/zlibshim.md);
// software output (klauspost/compress, stored blocks at worst) stays
// within that too; add the sync markers, the final empty block and the
// largest wrapper (gzip: 10-byte header, 8-byte trailer).
func (l *library) bound(sourceLen uint64) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	req := uint64(zlibshim.DefaultRequestSize)
	if p, err := l.process(); err == nil {
		req = uint64(p.Config().RequestSize)
	}
	n := sourceLen/req + 1
	return sourceLen + n*(req/8+1024+5) + 2 + 18
}

// statsReport is what savanna_zlibgo_stats returns.
type statsReport struct {
	Service      string          `json:"service"`
	ServiceError string          `json:"service_error,omitempty"`
	InitErrors   uint64          `json:"init_errors"`
	Status       zlibshim.Status `json:"status"`
	Stats        zlibshim.Stats  `json:"stats"`
}

func (l *library) stats() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := statsReport{Service: l.kind, ServiceError: l.serviceError, InitErrors: l.initErrors}
	if l.p != nil {
		r.Status, r.Stats = l.p.Status(), l.p.Stats()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return []byte(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	return b
}
