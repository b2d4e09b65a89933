package scenario

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
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
	if f.Duration < 0 || f.Warmup < 0 {
		return errAt("duration", "durations cannot be negative")
	}
	if len(f.Hosts) == 0 {
		return errAt("hosts", "at least one host is required")
	}
	nics := map[string]bool{}
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
				if _, err := netip.ParsePrefix(n.IP); err != nil {
					return errAt(nk+".ip", "%q is not an address with a prefix length such as 10.0.0.1/24", n.IP)
				}
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
		for key, p := range map[string]float64{"loss": l.Loss, "duplicate": l.Duplicate, "reorder": l.Reorder, "corrupt": l.Corrupt} {
			if p < 0 || p > 1 {
				return errAt(lk+"."+key, "%v is not a probability between 0 and 1", p)
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
		if e.Reload != "" && f.Hosts[e.Reload] == nil {
			return errAt(ek+".reload", "no host %q", e.Reload)
		}
		for key, nic := range map[string]string{"link_down": e.LinkDown, "link_up": e.LinkUp} {
			if nic != "" && !nics[nic] {
				return errAt(ek+"."+key, "no NIC %q; name host.nic", nic)
			}
		}
		for key, q := range map[string]*QATFault{"qat_fault": e.QATFault, "qat_clear": e.QATClear} {
			if q != nil && f.Hosts[q.Host] == nil {
				return errAt(ek+"."+key+".host", "no host %q", q.Host)
			}
		}
	}
	for i, x := range f.Expect {
		if strings.TrimSpace(x) == "" {
			return errAt(fmt.Sprintf("expect[%d]", i), "empty expectation")
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
