package rig

import (
	"fmt"
	"time"

	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/qat"
)

// event is a scheduled scenario event; it is its own sim.Handler.
type event struct {
	w    *world
	e    scenario.Event
	link func(up bool)
	// fault injects or clears a QAT fault.
	fault func(at time.Duration) error
	err   error
}

// Fire runs the event's action.
func (ev *event) Fire(e *sim.Engine, _ uint64) {
	switch {
	case ev.e.LinkDown != "":
		ev.link(false)
	case ev.e.LinkUp != "":
		ev.link(true)
	case ev.fault != nil:
		ev.err = ev.fault(e.Now())
	case ev.e.Reload != "":
		ev.err = ev.w.hosts[ev.e.Reload].reload()
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
		case e.QATFault != nil || e.QATClear != nil:
			f, inject := e.QATFault, true
			if f == nil {
				f, inject = e.QATClear, false
			}
			action := "qat_fault"
			if !inject {
				action = "qat_clear"
			}
			h := w.hosts[f.Host]
			if h.qat == nil {
				return w.v.Errorf(key+"."+action+".host", "host %s has no QAT devices", f.Host)
			}
			devs := h.qat.Devices()
			if f.Device < 0 || f.Device >= len(devs) {
				return w.v.Errorf(key+"."+action+".device", "host %s has %d QAT device(s); device %d does not exist", f.Host, len(devs), f.Device)
			}
			kind := qat.FaultKind(f.Kind)
			if err := kind.Validate(); err != nil {
				return w.v.Errorf(key+"."+action+".kind", "%v", err)
			}
			d := devs[f.Device]
			if inject {
				ev.fault = func(at time.Duration) error {
					return d.InjectFault(kind, qat.FaultParams{At: at, Rate: f.Rate, Delay: f.For})
				}
			} else {
				ev.fault = func(time.Duration) error { return d.Clear(kind) }
			}
		case e.Reload != "":
			if w.hosts[e.Reload].reload == nil {
				return w.v.Errorf(key+".reload", "host %s runs no http app to reload", e.Reload)
			}
		default:
			return w.v.Errorf(key, "stop_app and start_app are part of the format but this Savanna version does not carry them out yet")
		}
		if e.At < w.eng.Now() {
			// Validation refuses these; the engine would panic.
			return w.v.Errorf(key+".at", "%v is before the start of the run; an event's at is 0 or later", e.At)
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
