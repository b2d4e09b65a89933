package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/scenarios"
)

// Limits of a fuzzed run: a few milliseconds of simulated time, a
// little app work, and a wall-time stop, so that each input is quick.
const (
	fuzzWarmup   = time.Millisecond
	fuzzDuration = 2 * time.Millisecond
	fuzzMaxWall  = 2 * time.Second
)

// fuzzAppCaps bound the app keys whose values set how much work an app
// does or how much it allocates at start.
func fuzzAppCaps() map[string]int64 {
	return map[string]int64{
		"clients": 64, "connections": 64, "terminals": 64, "warehouses": 64, "flows": 64, "pipeline": 16,
		"requests": 2000, "count": 2000, "data_size": 4096, "pages": 1 << 20,
	}
}

// FuzzScenario mutates the bundled scenarios and runs simrun on them:
// validate must exit 0 or 2, never panic; a file it finds valid then
// runs, cut short (fuzzWarmup, fuzzDuration, fuzzAppCaps, fuzzMaxWall),
// and must exit 0, 1 or 2, never panic.
//
//	go test -run '^$' -fuzz FuzzScenario -fuzztime 10m -parallel 1 ./cmd/simrun
func FuzzScenario(f *testing.F) {
	for _, name := range scenarios.Names() {
		data, err := scenarios.Read(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// The hostile files of issue 17, which validate must refuse with
	// bounded work (hostile_test.go).
	hostile, err := filepath.Glob("testdata/hostile/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range hostile {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = capPools(data)
		path := filepath.Join(t.TempDir(), "fuzz.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := run([]string{"validate", path}, &out, &errOut)
		if code != 0 && code != 2 {
			t.Fatalf("validate exited %d:\n%s%s", code, out.String(), errOut.String())
		}
		if code != 0 {
			return
		}
		s, err := scenario.Load(path)
		if err != nil {
			t.Fatalf("validate passed a file that does not load: %v", err)
		}
		shorten(s)
		out.Reset()
		errOut.Reset()
		code = execute(s, runFlags{format: "json", maxWall: fuzzMaxWall}, nil, nil, &out, &errOut)
		if code != 0 && code != 1 && code != 2 {
			t.Fatalf("run exited %d:\n%s", code, errOut.String())
		}
	})
}

// fuzzPoolCaps bound the NIC keys that size rings and mbuf pools, which
// validate allocates too when it builds the variants.
func fuzzPoolCaps() map[string]int64 {
	return map[string]int64{"mbufs": 8192, "rx_ring": 1024, "tx_ring": 1024}
}

// capPools lowers the ring and pool sizes of a file above fuzzPoolCaps,
// so that building it is quick; a file with none above them (or that is
// not YAML) is left byte for byte as it is.
func capPools(data []byte) []byte {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return data
	}
	before := fingerprint(&doc)
	capWorkOf(&doc, fuzzPoolCaps())
	if fingerprint(&doc) == before {
		return data
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return data
	}
	return out
}

// fingerprint is every scalar of a node tree, to tell whether capping
// changed any.
func fingerprint(n *yaml.Node) string {
	var b bytes.Buffer
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		b.WriteString(n.Value)
		b.WriteByte(0)
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// shorten cuts every variant of s to a short run with little app work.
// Events after the new end never fire, which is fine for a fuzzed run.
func shorten(s *scenario.Scenario) {
	for _, v := range s.Variants {
		f := v.File
		f.Warmup = min(f.Warmup, fuzzWarmup)
		f.Duration = min(f.MeasuredDuration(), fuzzDuration)
		for _, h := range f.Hosts {
			if h == nil {
				continue
			}
			for i := range h.Apps {
				capWork(&h.Apps[i])
			}
		}
	}
}

// capWork lowers the integers of an app's node under fuzzAppCaps' keys,
// in lists too (http's pages).
func capWork(n *yaml.Node) { capWorkOf(n, fuzzAppCaps()) }

func capWorkOf(n *yaml.Node, caps map[string]int64) {
	if n.Kind == yaml.DocumentNode || n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			capWorkOf(c, caps)
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		limit, ok := caps[n.Content[i].Value]
		if !ok {
			capWorkOf(n.Content[i+1], caps)
			continue
		}
		v := n.Content[i+1]
		vals := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			vals = v.Content
		}
		for _, x := range vals {
			if x.Kind != yaml.ScalarNode {
				continue
			}
			if n, err := strconv.ParseInt(x.Value, 0, 64); err == nil && n > limit {
				x.Value = strconv.FormatInt(limit, 10)
			} else if err != nil {
				if _, uerr := strconv.ParseUint(x.Value, 0, 64); uerr == nil {
					x.Value = strconv.FormatInt(limit, 10)
				}
			}
		}
	}
}
