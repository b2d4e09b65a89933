package numa

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// WriteText writes t for people, in the spirit of lscpu and numactl -H:
// summary lines (CPUs, sockets, cores per socket, threads per core, NUMA
// nodes, MHz, each node's CPUs), then per node its CPUs in compact form,
// size and hugepages (with what is free when mem is given), then the
// distance matrix exactly as numactl -H prints it, then the notes.
func WriteText(w io.Writer, t *Topology, mem *Memory) error {
	bw := bufio.NewWriter(w)
	kv := func(k, format string, args ...any) {
		fmt.Fprintf(bw, "%-22s%s\n", k+":", fmt.Sprintf(format, args...))
	}
	kv("Machine", "%s", t.Name)
	if t.Description != "" {
		kv("Description", "%s", t.Description)
	}
	kv("CPU(s)", "%d", t.NumCPUs())
	kv("On-line CPU(s) list", "%s", FormatList(t.CPUIDs()))
	kv("Thread(s) per core", "%d", t.ThreadsPerCore())
	kv("Core(s) per socket", "%d", t.CoresPerSocket())
	kv("Socket(s)", "%d", t.Sockets)
	kv("NUMA node(s)", "%d", t.NumNodes())
	if t.GHz > 0 {
		kv("CPU MHz", "%.3f", t.GHz*1000)
	} else {
		kv("CPU MHz", "unknown")
	}
	for _, n := range t.Nodes {
		kv(fmt.Sprintf("NUMA node%d CPU(s)", n.ID), "%s", FormatList(n.CPUs))
	}
	fmt.Fprintln(bw)

	fmt.Fprintf(bw, "available: %d nodes (%s)\n", t.NumNodes(), FormatList(t.NodeIDs()))
	for _, n := range t.Nodes {
		fmt.Fprintf(bw, "node %d cpus: %s\n", n.ID, FormatList(n.CPUs))
		fmt.Fprintf(bw, "node %d size: %d MiB\n", n.ID, n.MemoryBytes/MiB)
		fmt.Fprintf(bw, "node %d hugepages: %s\n", n.ID, hugeLine(n, mem))
	}
	writeDistances(bw, t)
	if len(t.Notes) > 0 {
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "notes:")
		for _, note := range t.Notes {
			fmt.Fprintf(bw, "  - %s\n", note)
		}
	}
	return bw.Flush()
}

func hugeLine(n Node, mem *Memory) string {
	if mem != nil {
		if s, ok := mem.NodeStats(n.ID); ok {
			return fmt.Sprintf("%d x 2 MiB (%d free), %d x 1 GiB (%d free)",
				s.Pages2M.TotalPages, s.Pages2M.FreePages, s.Pages1G.TotalPages, s.Pages1G.FreePages)
		}
	}
	return fmt.Sprintf("%d x 2 MiB, %d x 1 GiB reserved", n.Hugepages2M, n.Hugepages1G)
}

// writeDistances prints the matrix in numactl -H's layout (numactl.c
// print_distances, up to 2.0.16: "% 3d " per column, trailing spaces
// included; the layout of the LKML post the Kunpeng preset comes from).
func writeDistances(w io.Writer, t *Topology) {
	fmt.Fprintln(w, "node distances:")
	fmt.Fprint(w, "node ")
	for _, n := range t.Nodes {
		fmt.Fprintf(w, "% 3d ", n.ID)
	}
	fmt.Fprintln(w)
	for _, n := range t.Nodes {
		fmt.Fprintf(w, "% 3d: ", n.ID)
		for j := range t.Nodes {
			fmt.Fprintf(w, "% 3d ", t.Distance(n.ID, t.Nodes[j].ID))
		}
		fmt.Fprintln(w)
	}
}

// jsonNode is a Node with its compact CPU list for people.
type jsonNode struct {
	ID          int    `json:"id"`
	Socket      int    `json:"socket"`
	CPUList     string `json:"cpulist"`
	CPUs        []int  `json:"cpus"`
	MemoryBytes int64  `json:"memory_bytes"`
	Hugepages2M int64  `json:"hugepages_2m"`
	Hugepages1G int64  `json:"hugepages_1g"`
}

// jsonDoc is WriteJSON's document. Field order is fixed by the struct;
// every list is sorted; derived counts are checked on reading.
type jsonDoc struct {
	Name           string       `json:"name"`
	Description    string       `json:"description"`
	NumCPUs        int          `json:"num_cpus"`
	NumNodes       int          `json:"num_nodes"`
	Sockets        int          `json:"sockets"`
	CoresPerSocket int          `json:"cores_per_socket"`
	ThreadsPerCore int          `json:"threads_per_core"`
	GHz            float64      `json:"ghz"`
	SMTYield       float64      `json:"smt_yield,omitempty"`
	SMTYieldSource string       `json:"smt_yield_source,omitempty"`
	CPUs           []CPU        `json:"cpus"`
	Nodes          []jsonNode   `json:"nodes"`
	Distances      [][]int      `json:"distances"`
	Notes          []string     `json:"notes"`
	Hugepages      *MemoryStats `json:"hugepages,omitempty"`
}

// WriteJSON writes t (and, when mem is given, its hugepage accounting) as
// indented JSON with a fixed field order and sorted lists, so the same
// machine always gives the same bytes. ReadJSON reads it back.
func WriteJSON(w io.Writer, t *Topology, mem *Memory) error {
	d := jsonDoc{
		Name: t.Name, Description: t.Description,
		NumCPUs: t.NumCPUs(), NumNodes: t.NumNodes(), Sockets: t.Sockets,
		CoresPerSocket: t.CoresPerSocket(), ThreadsPerCore: t.ThreadsPerCore(),
		GHz:      t.GHz,
		SMTYield: t.SMTYield, SMTYieldSource: t.SMTYieldSource,
		CPUs:      t.Clone().CPUs,
		Distances: t.Distances,
		Notes:     slices.Clone(t.Notes),
	}
	if d.Notes == nil {
		d.Notes = []string{}
	}
	for _, n := range t.Nodes {
		cpus := slices.Clone(n.CPUs)
		if cpus == nil {
			cpus = []int{}
		}
		d.Nodes = append(d.Nodes, jsonNode{ID: n.ID, Socket: n.Socket, CPUList: FormatList(n.CPUs), CPUs: cpus,
			MemoryBytes: n.MemoryBytes, Hugepages2M: n.Hugepages2M, Hugepages1G: n.Hugepages1G})
	}
	if mem != nil {
		s := mem.Stats()
		d.Hugepages = &s
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("topology %q: %w", t.Name, err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadJSON reads a document WriteJSON wrote (the hugepage accounting, if
// any, is ignored) and checks it.
func ReadJSON(r io.Reader) (*Topology, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("topology json: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d jsonDoc
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("topology json: %w", err)
	}
	t := &Topology{Name: d.Name, Description: d.Description, Sockets: d.Sockets, GHz: d.GHz,
		CPUs: d.CPUs, Distances: d.Distances, Notes: d.Notes, SMTYield: d.SMTYield, SMTYieldSource: d.SMTYieldSource}
	for _, n := range d.Nodes {
		if n.CPUList != FormatList(n.CPUs) {
			return nil, fmt.Errorf("topology json: node %d: cpulist %q disagrees with cpus %v", n.ID, n.CPUList, n.CPUs)
		}
		t.Nodes = append(t.Nodes, Node{ID: n.ID, Socket: n.Socket, CPUs: n.CPUs, MemoryBytes: n.MemoryBytes,
			Hugepages2M: n.Hugepages2M, Hugepages1G: n.Hugepages1G})
	}
	if err := t.Check(); err != nil {
		return nil, fmt.Errorf("topology json: %w", err)
	}
	for _, c := range []struct {
		key       string
		got, want int
	}{
		{"num_cpus", d.NumCPUs, t.NumCPUs()}, {"num_nodes", d.NumNodes, t.NumNodes()},
		{"cores_per_socket", d.CoresPerSocket, t.CoresPerSocket()}, {"threads_per_core", d.ThreadsPerCore, t.ThreadsPerCore()},
	} {
		if c.got != c.want {
			return nil, fmt.Errorf("topology json: %s is %d but the CPUs give %d", c.key, c.got, c.want)
		}
	}
	return t, nil
}
