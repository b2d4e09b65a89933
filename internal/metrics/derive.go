package metrics

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// shape says how a Stats struct of the stack becomes metrics.
type shape struct {
	// prefix starts every name, e.g. "savanna_tcp".
	prefix string
	// what names the struct in help texts, e.g. "tcp.Stats".
	what string
	// gauges lists the JSON names of unsigned fields that are gauges,
	// not counters (tcp's curr_estab).
	gauges map[string]bool
	// labelled maps the JSON name of a nested struct to the label its
	// fields become values of (tcp's drops: reason), instead of name
	// segments.
	labelled map[string]string
	// skip lists JSON names left out (exported another way).
	skip map[string]bool
	// rename maps a field's JSON path ("ipv6_out", "ndp.rx_x": nested
	// names joined by dots) to the name segment it takes instead, where
	// the JSON name would make the same metric name as another field
	// (iface.Stats6's ipv6_out.requests and ipv6.out_requests) or one
	// promlint reads as an abbreviated unit ("_us_").
	rename map[string]string
	// labels are the variable labels every metric carries, e.g. lcore.
	labels []string
}

// fieldMetric is one field of a struct turned into one sample.
type fieldMetric struct {
	index []int
	desc  *prometheus.Desc
	vt    prometheus.ValueType
	scale float64
	// extra is the value of the labelled struct's label, "" when none.
	extra string
}

// derived is a struct type turned into metrics.
type derived struct {
	fields []fieldMetric
	descs  []*prometheus.Desc
}

// validName is Prometheus' metric name syntax.
var validName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// derive walks t's fields by their JSON names. It fails on a name that
// would not be a valid metric name, so that a badly named field is found
// by the specs, not by a scrape.
func derive(t reflect.Type, sh shape) (*derived, error) {
	d := &derived{}
	descs := map[string]*prometheus.Desc{}
	// seen catches two fields that would send the same series (one name,
	// one value of the labelled struct's label): a registry refuses the
	// scrape, so derive refuses the struct.
	seen := map[string]string{}
	var walk func(t reflect.Type, index []int, path, name, label, labelValue string) error
	walk = func(t reflect.Type, index []int, path, name, label, labelValue string) error {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			json := jsonName(f)
			if json == "" || (len(index) == 0 && sh.skip[json]) {
				continue
			}
			idx := append(append([]int(nil), index...), i)
			fpath := json
			if path != "" {
				fpath = path + "." + json
			}
			seg := json
			if r, ok := sh.rename[fpath]; ok {
				seg = r
			}
			if f.Type.Kind() == reflect.Struct {
				if l, ok := sh.labelled[json]; ok && label == "" {
					if err := walk(f.Type, idx, fpath, join(name, seg), l, ""); err != nil {
						return err
					}
					continue
				}
				if err := walk(f.Type, idx, fpath, join(name, seg), label, labelValue); err != nil {
					return err
				}
				continue
			}
			base := join(name, seg)
			if label != "" {
				labelValue, base = json, name
			}
			fm := fieldMetric{index: idx, scale: 1, extra: labelValue}
			switch f.Type.Kind() {
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				fm.vt = prometheus.CounterValue
				if sh.gauges[json] {
					fm.vt = prometheus.GaugeValue
				}
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Bool:
				// Levels; a flag is a gauge of 0 or 1.
				fm.vt = prometheus.GaugeValue
			default:
				continue // strings, slices: not figures
			}
			if s, ok := strings.CutSuffix(base, "_nanos"); ok {
				// Time counted in nanoseconds: seconds, the base unit.
				base, fm.scale, fm.vt = s+"_seconds", 1e-9, prometheus.CounterValue
			}
			full := sh.prefix + "_" + base
			if fm.vt == prometheus.CounterValue {
				full += "_total"
			}
			if !validName.MatchString(full) {
				return fmt.Errorf("metrics: %s field %s: %q is not a metric name", sh.what, f.Name, full)
			}
			key := full + "\x00" + labelValue
			if prev, dup := seen[key]; dup {
				return fmt.Errorf("metrics: %s fields %s and %s both make %q", sh.what, prev, f.Name, full)
			}
			seen[key] = f.Name
			desc, ok := descs[full]
			if !ok {
				labels := sh.labels
				help := fmt.Sprintf("%s %s", sh.what, strings.TrimPrefix(join(name, json), "_"))
				if label != "" {
					labels = append(append([]string(nil), sh.labels...), label)
					help = fmt.Sprintf("%s %s by %s", sh.what, name, label)
				}
				desc = prometheus.NewDesc(full, help+" ("+kindWord(fm)+").", labels, nil)
				descs[full] = desc
				d.descs = append(d.descs, desc)
			}
			fm.desc = desc
			d.fields = append(d.fields, fm)
		}
		return nil
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("metrics: %s is a %v, want a struct", sh.what, t.Kind())
	}
	if err := walk(t, nil, "", "", "", ""); err != nil {
		return nil, err
	}
	return d, nil
}

func kindWord(fm fieldMetric) string {
	if fm.vt == prometheus.CounterValue {
		return "counter"
	}
	return "gauge"
}

// jsonName returns the field's JSON name, "" for a field JSON skips.
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	name, _, _ := strings.Cut(tag, ",")
	switch name {
	case "-":
		return ""
	case "":
		return snake(f.Name)
	}
	return name
}

// snake turns a Go name into snake_case (RxNoMbuf: rx_no_mbuf), for
// fields without a JSON tag.
func snake(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		upper := c >= 'A' && c <= 'Z'
		if upper && i > 0 && (r[i-1] < 'A' || r[i-1] > 'Z' || (i+1 < len(r) && r[i+1] >= 'a' && r[i+1] <= 'z')) {
			b.WriteByte('_')
		}
		if upper {
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "_" + b
}

// collect sends v's figures with the given label values.
func (d *derived) collect(ch chan<- prometheus.Metric, v reflect.Value, labelValues ...string) {
	for _, f := range d.fields {
		fv := v.FieldByIndex(f.index)
		var x float64
		switch {
		case fv.Kind() == reflect.Bool:
			if fv.Bool() {
				x = 1
			}
		case fv.CanUint():
			x = float64(fv.Uint())
		default:
			x = float64(fv.Int())
		}
		lv := labelValues
		if f.extra != "" {
			lv = append(append([]string(nil), labelValues...), f.extra)
		}
		ch <- prometheus.MustNewConstMetric(f.desc, f.vt, x*f.scale, lv...)
	}
}
