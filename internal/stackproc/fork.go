package stackproc

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// forkClaimWindow is how long a fork registration waits for its child:
// the child claims it from its fork handler, before fork returns in it,
// so only a child that died or exec'd at once leaves one unclaimed.
const forkClaimWindow = 30 * time.Second

// A forkReg is what a process about to fork held that its child
// inherits: its listeners, by slot. Registering holds them, so that a
// parent that exits right after the fork (a daemon's first process)
// does not close them before the child claims them.
type forkReg struct {
	parent int
	items  []forkItem
	timer  *time.Timer
}

type forkItem struct {
	slot int
	l    *listener // a listener, or
	sh   *shared   // a connection
}

// registerFork records p's listeners for a child about to be forked and
// returns the token the child presents in its hello.
func (s *Server) registerFork(p *proc) uint64 {
	var items []forkItem
	p.mu.Lock()
	var conns []*sock
	for i, k := range p.socks {
		switch {
		case k == nil:
		case k.lst != nil:
			if k.lst.hold() {
				items = append(items, forkItem{slot: i, l: k.lst})
			}
		case k.conn.Load() != nil:
			conns = append(conns, k)
		}
	}
	p.mu.Unlock()
	for _, k := range conns { // share takes p.mu
		if sh := k.share(); sh != nil {
			items = append(items, forkItem{slot: k.slot, sh: sh})
		}
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	tok := binary.LittleEndian.Uint64(b[:]) | 1
	r := &forkReg{parent: p.pid, items: items}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forks[tok] = r
	s.counters.Forks++
	// Under s.mu: claimFork reads the timer under it.
	r.timer = time.AfterFunc(forkClaimWindow, func() {
		if r := s.claimFork(tok); r != nil {
			s.mu.Lock()
			s.counters.ForksExpired++
			s.mu.Unlock()
			r.drop()
		}
	})
	return tok
}

// claimFork takes the registration tok, nil when there is none.
func (s *Server) claimFork(tok uint64) *forkReg {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.forks[tok]
	if r == nil {
		return nil
	}
	delete(s.forks, tok)
	if r.timer != nil {
		r.timer.Stop()
	}
	return r
}

// drop lets go of the registration's listeners.
func (r *forkReg) drop() {
	for _, it := range r.items {
		if it.sh != nil {
			it.sh.release()
			continue
		}
		it.l.release()
	}
}

// adoptFork gives child p, at the same slot numbers as in its parent,
// the listeners its parent registered, so the descriptors it inherited
// keep working; the registration's hold passes to p's slots.
func (p *proc) adoptFork(r *forkReg) {
	for _, it := range r.items {
		if it.sh != nil {
			if p.adoptConn(it.slot, it.sh) {
				p.s.mu.Lock()
				p.s.counters.InheritedConns++
				p.s.mu.Unlock()
			}
			continue
		}
		if k := p.adoptListener(it.slot, it.l); k != nil {
			p.s.mu.Lock()
			p.s.counters.Inherited++
			p.s.mu.Unlock()
		}
		it.l.release()
	}
}
