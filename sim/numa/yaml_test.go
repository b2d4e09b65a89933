package numa_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
	"github.com/savanna-sim/savanna/sim/numa"
)

var _ = Describe("scenario YAML", func() {
	It("decodes an inline machine with per-node hugepages", func() {
		var s numa.Spec
		Expect(yamlstrict.Decode("s.yaml", []byte(`
sockets: 2
nodes_per_socket: 2
cores_per_node: 4
threads_per_core: 1
ghz: 2.6
memory_per_node: 8GiB
distances: [[10, 12, 20, 22], [12, 10, 22, 24], [20, 22, 10, 12], [22, 24, 12, 10]]
hugepages: {2MiB: [1024, 1024, 0, 0], 1GiB: [1]}
`), &s)).To(Succeed())
		t, err := s.Build()
		Expect(err).NotTo(HaveOccurred())
		Expect(t.NumCPUs()).To(Equal(16))
		Expect(t.Distance(1, 3)).To(Equal(24))
		m, err := numa.NewMemory(t, nil)
		Expect(err).NotTo(HaveOccurred())
		st := m.Stats()
		Expect(st.Nodes[1].Pages2M.TotalPages).To(Equal(int64(1024)))
		Expect(st.Nodes[2].Pages2M.TotalPages).To(BeZero())
		Expect(st.Nodes[3].Pages1G.TotalPages).To(Equal(int64(1)))
	})

	It("decodes a preset with hugepages", func() {
		var s numa.Spec
		Expect(yamlstrict.Decode("s.yaml", []byte("preset: kunpeng920-4826-2p\nhugepages: {2MiB: [4096]}\n"), &s)).To(Succeed())
		t, err := s.Build()
		Expect(err).NotTo(HaveOccurred())
		n2, _ := t.Node(2)
		Expect(n2.Hugepages2M).To(Equal(int64(4096)))
	})

	It("rejects an unknown hugepage size key", func() {
		var s numa.Spec
		err := yamlstrict.Decode("s.yaml", []byte("preset: kunpeng920-4826-2p\nhugepages: {2M: [1]}\n"), &s)
		Expect(err).To(MatchError(ContainSubstring(`key "hugepages.2M": unknown key; expected one of: 1GiB, 2MiB`)))
	})
})
