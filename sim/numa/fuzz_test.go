package numa_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/savanna-sim/savanna/sim/numa"
)

// FuzzParseSize: sizes come from scenario files.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"64GiB", "2 MiB", "1.5GiB", "4096", "9999999999TiB", "", "1.2.3MB", "1e3GiB", ".5KiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := numa.ParseSize(s)
		if err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d, negative without error", s, n)
		}
	})
}

// FuzzParseList: cpulists come from sysfs files.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"0-3,8-11", "0", "", "5,0-2,1", "3-1", "0-65535", "1,,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := numa.ParseList(s)
		if err != nil {
			return
		}
		back, err := numa.ParseList(numa.FormatList(ids))
		if err != nil || !equalInts(back, ids) {
			t.Fatalf("ParseList(%q) = %v, but its formatted form %q gives %v, %v", s, ids, numa.FormatList(ids), back, err)
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzReadJSON: topology documents may be handed in by users.
func FuzzReadJSON(f *testing.F) {
	// Small, compact seeds: the fuzzer minimises every new input byte by
	// byte, which takes minutes on a 20 KB preset document.
	for _, spec := range []numa.Spec{
		{Sockets: 1, NodesPerSocket: 2, CoresPerNode: 1, ThreadsPerCore: 2, GHz: 2, MemoryPerNode: "1GiB"},
		{Sockets: 2, NodesPerSocket: 1, CoresPerNode: 1, ThreadsPerCore: 1, GHz: 2, MemoryPerNode: "1GiB", Distances: [][]int{{10, 21}, {21, 10}}},
	} {
		tp, err := spec.Build()
		if err != nil {
			f.Fatal(err)
		}
		var b, c bytes.Buffer
		if err := numa.WriteJSON(&b, tp, nil); err != nil {
			f.Fatal(err)
		}
		if err := json.Compact(&c, b.Bytes()); err != nil {
			f.Fatal(err)
		}
		f.Add(c.Bytes())
	}
	f.Add([]byte(`{"cpus":[{"id":0,"node":5,"siblings":[0]}],"nodes":[{"id":0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, err := numa.ReadJSON(bytes.NewReader(data))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := numa.WriteText(&b, tp, nil); err != nil {
			t.Fatal(err)
		}
		b.Reset()
		if err := numa.WriteJSON(&b, tp, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := numa.ReadJSON(&b); err != nil {
			t.Fatalf("a checked topology did not read back: %v", err)
		}
		for _, c := range tp.CPUs {
			for _, n := range tp.Nodes {
				_ = tp.AccessFactor(c.ID, n.ID)
				_ = tp.RemoteBytes(c.ID, n.ID, 1<<20)
			}
		}
	})
}

// FuzzReadHost: the node files of sysfs (cpulist, meminfo, distance) are
// bytes from the kernel, or from a container runtime's fake /sys.
func FuzzReadHost(f *testing.F) {
	f.Add("0-1", "Node 0 MemTotal: 4000 kB\n", "10 20", "2", "Node 1 MemTotal: 4000 kB\n", "20 10")
	f.Add("0-3", "Node 0 MemTotal: x kB\n", "10", "", "", "")
	f.Add("0,1", "Node 0 MemTotal: 99999999999999999999 kB\n", "10 21", "1", "Node 1 MemTotal: 1 kB", "21 10 7")
	f.Fuzz(func(t *testing.T, cpus0, mem0, dist0, cpus1, mem1, dist1 string) {
		root := t.TempDir()
		files := map[string]string{
			"sys/devices/system/cpu/online":          "0-2",
			"sys/devices/system/node/online":         "0-1",
			"sys/devices/system/node/node0/cpulist":  cpus0,
			"sys/devices/system/node/node0/meminfo":  mem0,
			"sys/devices/system/node/node0/distance": dist0,
			"sys/devices/system/node/node1/cpulist":  cpus1,
			"sys/devices/system/node/node1/meminfo":  mem1,
			"sys/devices/system/node/node1/distance": dist1,
		}
		for i, s := range []string{"0", "1", "2"} {
			d := "sys/devices/system/cpu/cpu" + s + "/topology/"
			files[d+"core_id"] = s
			files[d+"physical_package_id"] = []string{"0", "0", "1"}[i]
			files[d+"thread_siblings_list"] = s
		}
		for rel, content := range files {
			p := filepath.Join(root, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tp, err := numa.ReadHost(filepath.Join(root, "sys"))
		if err != nil {
			return
		}
		if err := tp.Check(); err != nil {
			t.Fatalf("ReadHost returned an inconsistent topology: %v", err)
		}
	})
}

// FuzzSysfsParsers: the parsers of the node and proc files ReadHost reads,
// without the file I/O that makes FuzzReadHost slow.
func FuzzSysfsParsers(f *testing.F) {
	f.Add([]byte("Node 0 MemTotal:       16384000 kB\nNode 0 MemFree: 1 kB\n"), "10 21", []byte("processor\t: 0\ncpu MHz\t\t: 2096.035\n"))
	f.Add([]byte("Node 0 MemTotal: 99999999999999999999 kB\n"), "10 x", []byte("cpu MHz: -3\n"))
	f.Add([]byte("Node 0 MemTotal: 12 MB\n"), "", []byte("cpu MHz"))
	f.Fuzz(func(t *testing.T, meminfo []byte, distance string, cpuinfo []byte) {
		if n, err := numa.ParseMemTotal("meminfo", meminfo, "Node 0 MemTotal:"); err == nil && n < 0 {
			t.Fatalf("negative memory %d without error", n)
		}
		if row, err := numa.ParseDistanceRow("distance", distance, 2); err == nil && len(row) != 2 {
			t.Fatalf("%d distances for 2 nodes without error", len(row))
		}
		if mhz, ok := numa.ParseCPUInfoMHz(cpuinfo); ok && !(mhz > 0) {
			t.Fatalf("clock %g MHz accepted", mhz)
		}
	})
}
