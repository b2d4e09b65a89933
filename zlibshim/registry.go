package zlibshim

import (
	"slices"
	"time"
)

// The registry of open streams: what leak reports read, what Exit
// reclaims. It replaces finalizers, whose timing is nondeterministic.

// streamEntry is a stream's line in the registry.
type streamEntry struct {
	id       uint64
	kind     StreamKind
	opened   time.Duration
	lastUsed time.Duration
	pinned   int64
	inst     bool
	// release returns the stream's resources; Exit calls it for streams
	// never ended.
	release func()
}

// LeakReport lists, by stream id, the open streams idle for LeakAge or
// longer: in a server whose requests end within LeakAge, these are
// streams dropped without their End (the seed's hugepage leak). The
// registry replaces finalizers, whose timing would be nondeterministic.
func (p *Process) LeakReport() []LeakedStream {
	now := p.meter.Now()
	var out []LeakedStream
	for _, e := range p.streams {
		if now-e.lastUsed >= p.cfg.LeakAge {
			out = append(out, e.report())
		}
	}
	slices.SortFunc(out, func(a, b LeakedStream) int { return cmpU64(a.ID, b.ID) })
	return out
}

// OpenStreams lists every open stream by id.
func (p *Process) OpenStreams() []LeakedStream {
	out := make([]LeakedStream, 0, len(p.streams))
	for _, e := range p.streams {
		out = append(out, e.report())
	}
	slices.SortFunc(out, func(a, b LeakedStream) int { return cmpU64(a.ID, b.ID) })
	return out
}

func (e *streamEntry) report() LeakedStream {
	return LeakedStream{
		ID: e.id, Kind: e.kind, Opened: e.opened, LastUsed: e.lastUsed,
		PinnedBytes: e.pinned, HoldsInstance: e.inst,
	}
}

// ReclaimLeaked returns the resources (pinned memory, instances) of the
// streams LeakReport lists, and returns how many it reclaimed. The
// streams stay usable: their next request takes resources anew or goes to
// software. It is the shim's defence against a caller that forgets its
// End; the leak stays counted.
func (p *Process) ReclaimLeaked() int {
	leaks := p.LeakReport()
	for _, l := range leaks {
		// The stream stays registered (and counted as leaked).
		p.streams[l.ID].release()
	}
	return len(leaks)
}

// Exit ends the process as a worker exits: streams never ended are
// counted as leaked and their resources returned, the process's instance
// is detached, and the service is told the process is gone (it takes back
// whatever is left). The Process serves only software afterwards.
func (p *Process) Exit() {
	if p.exited {
		return
	}
	ids := make([]uint64, 0, len(p.streams))
	for id := range p.streams {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		e := p.streams[id]
		e.release()
		p.unregister(e)
		p.stats.StreamsLeaked++
		p.reclaimed++
	}
	if p.inst != nil {
		p.detach(p.inst)
		p.inst = nil
	}
	p.releaseQuarantine(nil)
	if p.svc != nil {
		p.svc.Exit(p.pid)
	}
	p.exited = true
}

// register adds a stream to the registry.
func (p *Process) register(kind StreamKind) *streamEntry {
	p.nextStream++
	now := p.meter.Now()
	e := &streamEntry{id: p.nextStream, kind: kind, opened: now, lastUsed: now}
	p.streams[e.id] = e
	if kind == KindDeflate {
		p.stats.DeflateStreams++
	} else {
		p.stats.InflateStreams++
	}
	return e
}

func (p *Process) unregister(e *streamEntry) { delete(p.streams, e.id) }

func (p *Process) touch(e *streamEntry) { e.lastUsed = p.meter.Now() }
