package scenario_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/scenario"
)

var _ = Describe("a host's cost.model", func() {
	with := func(cost string) string {
		return strings.Replace(base, "    stack: {kind: lstack, cores: [1, 2]}\n",
			"    stack: {kind: lstack, cores: [1, 2]}\n    cost: "+cost+"\n", 1)
	}

	It("names an embedded model, with overrides on top", func() {
		s, err := scenario.Parse("t.yaml", []byte(with(`{model: kunpeng920, overrides: {syscall: {value: 90, unit: ns, source: measured, uncertainty: 0.1}}}`)))
		Expect(err).NotTo(HaveOccurred())
		c := s.File.Hosts["server"].Cost
		Expect(c.Model).To(Equal("kunpeng920"))
		Expect(c.Overrides["syscall"].Uncertainty).To(Equal(0.1))
	})

	It("refuses model beside file, naming file, line and key", func() {
		_, err := scenario.Parse("t.yaml", []byte(with(`{model: kunpeng920, file: mine.yaml}`)))
		Expect(err).To(MatchError(MatchRegexp(`^t\.yaml:10:12: key "hosts\.server\.cost\.model": model and file are mutually exclusive`)))
	})

	It("refuses an unknown model, listing the valid names", func() {
		_, err := scenario.Parse("t.yaml", []byte(with(`{model: kunpeng930}`)))
		Expect(err).To(MatchError(MatchRegexp(`^t\.yaml:10:12: key "hosts\.server\.cost\.model": no embedded cost model "kunpeng930"; valid models: default, kunpeng920, xeon-e5-2650v2`)))
	})
})
