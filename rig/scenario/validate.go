package scenario

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
	"github.com/savanna-sim/savanna/sim/qat"
)

// validate checks what the schema alone cannot: required keys, names that
// must be identifiers, references between sections. Checks that need the
// models (does a preset exist?) happen when the rig builds the variant.
func validate(path string, doc *yaml.Node, f *File) error {
	errAt := func(key, format string, args ...any) error {
		line, col := locate(doc, key)
		return &yamlstrict.Error{File: path, Line: line, Col: col, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if f.Version != FormatVersion {
		return errAt("version", "version is %d; this Savanna reads scenario format %d (required)", f.Version, FormatVersion)
	}
	if strings.TrimSpace(f.Name) == "" {
		return errAt("name", "name is required")
	}
	if err := validateSpan(doc, f, errAt); err != nil {
		return err
	}
	if len(f.Hosts) == 0 {
		return errAt("hosts", "at least one host is required")
	}
	nics := map[string]bool{}
	// addrs are the NICs' addresses in host and NIC order, for the
	// targets of load generators.
	var addrs []nicAddr
	for _, hn := range sortedHostNames(f) {
		h := f.Hosts[hn]
		hk := "hosts." + hn
		if !identRE.MatchString(hn) {
			return errAt(hk, "host names are identifiers (letters, digits, _), since expectations name them")
		}
		if h == nil {
			return errAt(hk, "empty host; it needs at least a machine")
		}
		if h.Machine.Kind == 0 {
			return errAt(hk, "key \"machine\" is required: a preset name (simrun topo lists them) or an inline topology")
		}
		for i, n := range h.NICs {
			nk := fmt.Sprintf("%s.nics[%d]", hk, i)
			if !identRE.MatchString(n.Name) {
				return errAt(nk+".name", "NIC name %q must be an identifier such as eth0", n.Name)
			}
			if nics[hn+"."+n.Name] {
				return errAt(nk+".name", "NIC %s is defined twice on host %s", n.Name, hn)
			}
			nics[hn+"."+n.Name] = true
			if n.IP != "" {
				p, err := netip.ParsePrefix(n.IP)
				if err != nil {
					return errAt(nk+".ip", "%q is not an address with a prefix length such as 10.0.0.1/24 or fd00::1/64", n.IP)
				}
				for _, o := range addrs {
					if o.addr == p.Addr() {
						return errAt(nk+".ip", "address %s is also on %s (%s); each NIC needs its own", p.Addr(), o.ref, o.key)
					}
				}
				addrs = append(addrs, nicAddr{addr: p.Addr(), ref: hn + "." + n.Name, key: nk + ".ip"})
			}
		}
		if h.Stack != nil {
			switch h.Stack.Kind {
			case "lstack", "kernel":
			default:
				return errAt(hk+".stack.kind", "stack kind %q; expected lstack or kernel", h.Stack.Kind)
			}
			switch h.Stack.Congestion {
			case "", "newreno", "cubic":
			default:
				return errAt(hk+".stack.congestion", "congestion control %q; expected newreno or cubic", h.Stack.Congestion)
			}
			switch h.Stack.MbufNode {
			case "", "core", "nic":
			default:
				return errAt(hk+".stack.mbuf_node", "mbuf_node %q; expected core (the pool on each stack core's node) or nic (on the port's)", h.Stack.MbufNode)
			}
			switch h.Stack.Neighbors {
			case "", "cold", "warm":
			default:
				return errAt(hk+".stack.neighbors", "neighbors %q; expected cold (ARP resolves on first use) or warm (peers known at start)", h.Stack.Neighbors)
			}
			// 0 would admit no connection: refuse it rather than read it
			// as "not set", which only an absent key means.
			if h.Stack.MaxConnections < 0 || (h.Stack.MaxConnections == 0 && present(doc, hk+".stack.max_connections")) {
				return errAt(hk+".stack.max_connections", "%d admits no connection; give 1 or more, or leave the key out for TCP's default", h.Stack.MaxConnections)
			}
		}
		for i, a := range h.Apps {
			ak := fmt.Sprintf("%s.apps[%d]", hk, i)
			if a.Kind != yaml.MappingNode {
				return errAt(ak, "an app is a mapping with at least a kind")
			}
			if kind := mapValue(&a, "kind"); kind == nil || kind.Value == "" {
				return errAt(ak, "key \"kind\" is required")
			}
		}
	}
	if err := validateTargets(f, addrs, errAt); err != nil {
		return err
	}
	if err := checkTotals(f, errAt); err != nil {
		return err
	}
	for i, l := range f.Links {
		lk := fmt.Sprintf("links[%d]", i)
		if len(l.Ends) != 2 {
			return errAt(lk+".ends", "a link has exactly two ends, each host.nic")
		}
		for j, end := range l.Ends {
			if !nics[end] {
				return errAt(fmt.Sprintf("%s.ends[%d]", lk, j), "no NIC %q; ends name host.nic of a NIC defined under hosts", end)
			}
		}
		for _, p := range []struct {
			key string
			p   float64
		}{{"loss", l.Loss}, {"duplicate", l.Duplicate}, {"reorder", l.Reorder}, {"corrupt", l.Corrupt}} {
			if p.p < 0 || p.p > 1 || math.IsNaN(p.p) {
				return errAt(lk+"."+p.key, "%v is not a probability between 0 and 1", p.p)
			}
		}
	}
	for i, c := range f.Capture {
		if !nics[c] {
			return errAt(fmt.Sprintf("capture[%d]", i), "no NIC %q; capture names host.nic", c)
		}
	}
	for i, e := range f.Events {
		ek := fmt.Sprintf("events[%d]", i)
		n := 0
		for _, set := range []bool{e.Reload != "", e.LinkDown != "", e.LinkUp != "", e.QATFault != nil, e.QATClear != nil, e.StopApp != "", e.StartApp != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return errAt(ek, "an event has exactly one action (reload, link_down, link_up, qat_fault, qat_clear, stop_app, start_app); found %d", n)
		}
		if e.At < 0 {
			return errAt(ek+".at", "%v is before the start of the run; an event's at is 0 or later", e.At)
		}
		if span := f.Span(); e.At > span {
			return errAt(ek+".at", "%v is after the end of the run (%v: warmup %v + duration %v); it would never happen",
				e.At, span, f.Warmup, describeDuration(f))
		}
		if e.Reload != "" && f.Hosts[e.Reload] == nil {
			return errAt(ek+".reload", "no host %q", e.Reload)
		}
		for key, nic := range map[string]string{"link_down": e.LinkDown, "link_up": e.LinkUp} {
			if nic != "" && !nics[nic] {
				return errAt(ek+"."+key, "no NIC %q; name host.nic", nic)
			}
		}
		for key, q := range map[string]*QATFault{"qat_fault": e.QATFault, "qat_clear": e.QATClear} {
			if q == nil {
				continue
			}
			if f.Hosts[q.Host] == nil {
				return errAt(ek+"."+key+".host", "no host %q", q.Host)
			}
			if err := validateQATFault(doc, ek+"."+key, q, key == "qat_fault", errAt); err != nil {
				return err
			}
		}
	}
	for i, x := range f.Expect {
		if strings.TrimSpace(x) == "" {
			return errAt(fmt.Sprintf("expect[%d]", i), "empty expectation")
		}
	}
	return validateReproduction(doc, f, errAt)
}

type errAtFunc func(key, format string, args ...any) error

// validateSpan checks warmup and duration. An absent duration takes
// DefaultDuration; an explicit 0 is an error, since it would measure
// nothing.
func validateSpan(doc *yaml.Node, f *File, errAt errAtFunc) error {
	if f.Warmup < 0 {
		return errAt("warmup", "%v is negative; warmup is 0 or more", f.Warmup)
	}
	if f.Duration < 0 {
		return errAt("duration", "%v is negative; duration is more than 0 (default %v when absent)", f.Duration, DefaultDuration)
	}
	if f.Duration == 0 && present(doc, "duration") {
		return errAt("duration", "a measured phase of 0s measures nothing; give a duration such as 1s, or leave the key out for the default %v", DefaultDuration)
	}
	// MaxDuration and MaxWarmup are checked with the other limits, on
	// the nodes (checkLimits).
	return nil
}

func describeDuration(f *File) string {
	if f.Duration == 0 {
		return DefaultDuration.String() + " (the default)"
	}
	return f.Duration.String()
}

// validateQATFault checks a qat_fault's or qat_clear's parameters as
// the device would when the event fires, so that validate finds them.
func validateQATFault(doc *yaml.Node, key string, q *QATFault, inject bool, errAt errAtFunc) error {
	kind := qat.FaultKind(q.Kind)
	if err := kind.Validate(); err != nil {
		return errAt(key+".kind", "%v", err)
	}
	if q.Device < 0 {
		return errAt(key+".device", "device %d; devices are numbered from 0 in the host's qat list", q.Device)
	}
	if !inject {
		return nil
	}
	hasRate := present(doc, key+".rate")
	if hasRate && (q.Rate < 0 || q.Rate > 1 || math.IsNaN(q.Rate)) {
		return errAt(key+".rate", "%v is not a share between 0 and 1", q.Rate)
	}
	switch {
	case kind == qat.FaultEngineError && !hasRate:
		return errAt(key+".rate", "engine_error needs a rate (the share of requests that fail, 0..1)")
	case kind != qat.FaultEngineError && hasRate:
		return errAt(key+".rate", "rate applies to engine_error only, not to %s", kind)
	}
	if q.For < 0 {
		return errAt(key+".for", "%v is negative", q.For)
	}
	return nil
}

// nicAddr is a NIC's address with where the file gives it.
type nicAddr struct {
	addr     netip.Addr
	ref, key string
}

// validateTargets checks that every app's target written as ip:port (the
// load generators: redis-benchmark, wrk, oltp-client) names an address a
// NIC of the file has. A target that is not ip:port is left to the app's
// own parser, whose error says what it expects.
func validateTargets(f *File, addrs []nicAddr, errAt errAtFunc) error {
	for _, hn := range sortedHostNames(f) {
		for i := range f.Hosts[hn].Apps {
			t := mapValue(&f.Hosts[hn].Apps[i], "target")
			if t == nil || t.Kind != yaml.ScalarNode {
				continue
			}
			ap, err := netip.ParseAddrPort(t.Value)
			if err != nil {
				continue
			}
			if slices.ContainsFunc(addrs, func(a nicAddr) bool { return a.addr == ap.Addr() }) {
				continue
			}
			var have []string
			for _, a := range addrs {
				have = append(have, a.addr.String()+" on "+a.ref)
			}
			list := "no NIC has an ip"
			if len(have) > 0 {
				list = "addresses: " + strings.Join(have, ", ")
			}
			return errAt(fmt.Sprintf("hosts.%s.apps[%d].target", hn, i), "no NIC has the address %s (%s)", ap.Addr(), list)
		}
	}
	return nil
}

func sortedHostNames(f *File) []string {
	names := make([]string, 0, len(f.Hosts))
	for n := range f.Hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// HostNames returns the file's host names, sorted.
func (f *File) HostNames() []string { return sortedHostNames(f) }

// mapValue returns the value of key in a mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// AppKind returns the kind of an app node.
func AppKind(n *yaml.Node) string {
	if v := mapValue(n, "kind"); v != nil {
		return v.Value
	}
	return ""
}
