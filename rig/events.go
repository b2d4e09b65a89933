package rig

import (
	"fmt"

	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/sim"
)

// event is a scheduled scenario event; it is its own sim.Handler.
type event struct {
	w    *world
	e    scenario.Event
	link func(up bool)
}

// Fire runs the event's action.
func (ev *event) Fire(*sim.Engine, uint64) {
	switch {
	case ev.e.LinkDown != "":
		ev.link(false)
	case ev.e.LinkUp != "":
		ev.link(true)
	}
}

// buildEvents schedules the file's events, refusing those this version
// cannot carry out rather than ignoring them.
func (w *world) buildEvents() error {
	for i, e := range w.v.File.Events {
		key := fmt.Sprintf("events[%d]", i)
		ev := &event{w: w, e: e}
		switch {
		case e.LinkDown != "" || e.LinkUp != "":
			ref := e.LinkDown + e.LinkUp
			l := w.linkOf(ref)
			if l == nil {
				return w.v.Errorf(key, "NIC %s is not on any link", ref)
			}
			ev.link = l.SetUp
		default:
			return w.v.Errorf(key, "this event needs a model this Savanna version does not wire yet (reload, qat_fault, qat_clear, stop_app and start_app come with the HTTP and QAT apps)")
		}
		w.events = append(w.events, ev)
		w.eng.At(e.At, ev, 0)
	}
	return nil
}

// linkOf returns the link with ref ("host.nic") at one end.
func (w *world) linkOf(ref string) interface{ SetUp(bool) } {
	for i, l := range w.v.File.Links {
		if l.Ends[0] == ref || l.Ends[1] == ref {
			return w.links[i]
		}
	}
	return nil
}
