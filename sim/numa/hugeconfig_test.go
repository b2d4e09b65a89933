package numa_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
	"github.com/savanna-sim/savanna/sim/numa"
)

var _ = Describe("hugepages in a scenario file", func() {
	decode := func(text string) (numa.HugepageConfig, error) {
		var c struct {
			Hugepages numa.HugepageConfig `yaml:"hugepages"`
		}
		err := yamlstrict.Decode("s.yaml", []byte(text), &c)
		return c.Hugepages, err
	}

	It("takes one number for every node, as a one-count list does", func() {
		one, err := decode("hugepages: {2MiB: 256}\n")
		Expect(err).NotTo(HaveOccurred())
		list, err := decode("hugepages: {2MiB: [256]}\n")
		Expect(err).NotTo(HaveOccurred())
		Expect(one).To(Equal(list))
		t, err := numa.Preset("kunpeng920-4826-2p")
		Expect(err).NotTo(HaveOccurred())
		m, err := numa.NewMemory(t, &one)
		Expect(err).NotTo(HaveOccurred())
		for _, n := range m.Stats().Nodes {
			Expect(n.Pages2M.TotalPages).To(Equal(int64(256)))
		}
	})

	It("names the line, column and key of a count that is not a number", func() {
		_, err := decode("hugepages:\n  2MiB: lots\n")
		Expect(err).To(MatchError(ContainSubstring(`s.yaml:2:9: key "hugepages.2MiB": "lots": expected a page count`)))
	})
})
