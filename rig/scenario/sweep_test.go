package scenario_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/scenario"
)

// swept is base with two variants and a sweep of 2 × 3 grid points and
// 2 seeds: 24 points.
const swept = base + `variants:
  a: {}
  b: {links.0.latency: 20us}
sweep:
  grid:
    links[0].loss: [0, 0.1]
    links[0].jitter: [1us, 2us, 3us]
  seeds: 2
`

var _ = Describe("a sweep", func() {
	It("expands variants × grid points (row-major) × seeds in a fixed order", func() {
		s, err := scenario.Parse("t.yaml", []byte(swept))
		Expect(err).NotTo(HaveOccurred())
		sw := s.Sweep()
		Expect(sw).NotTo(BeNil())
		Expect(sw.Keys).To(Equal([]string{"links[0].loss", "links[0].jitter"}))
		Expect(sw.GridPoints()).To(Equal(6))
		pts := sw.Points(nil)
		Expect(pts).To(HaveLen(24))
		var got []string
		for _, p := range pts {
			got = append(got, fmt.Sprintf("%d %s %v %d", p.Index, p.Variant.Name, p.Values, p.Seed))
		}
		Expect(got[:4]).To(Equal([]string{"0 a [0 1us] 5", "1 a [0 1us] 6", "2 a [0 2us] 5", "3 a [0 2us] 6"}))
		Expect(got[12:14]).To(Equal([]string{"12 b [0 1us] 5", "13 b [0 1us] 6"}))
		Expect(got[23]).To(Equal("23 b [0.1 3us] 6"))
		// The grid's values are applied on top of the variant's overrides.
		l := pts[23].Variant.File.Links[0]
		Expect(l.Loss).To(Equal(0.1))
		Expect(l.Jitter).To(Equal(3 * time.Microsecond))
		Expect(l.Latency).To(Equal(20 * time.Microsecond))
		Expect(pts[23].Variant.Overrides).To(Equal([]string{"links.0.latency", "links[0].loss", "links[0].jitter"}))
		// The file as written is left alone.
		Expect(s.Variants[1].File.Links[0].Loss).To(BeZero())
		seed := uint64(100)
		Expect(sw.Points(&seed)[3].Seed).To(Equal(uint64(101)))
	})

	It("may sweep seeds only", func() {
		s, err := scenario.Parse("t.yaml", []byte(base+"sweep: {seeds: 3}\n"))
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Sweep().Points(nil)).To(HaveLen(3))
		Expect(s.Sweep().Points(nil)[2].Seed).To(Equal(uint64(7)))
	})

	It("leaves a file without a sweep without one", func() {
		s, err := scenario.Parse("t.yaml", []byte(base))
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Sweep()).To(BeNil())
	})

	DescribeTable("names file, line and key of a bad key or value",
		func(section, want string) {
			_, err := scenario.Parse("t.yaml", []byte(base+section))
			Expect(err).To(MatchError(MatchRegexp(want)))
		},
		Entry("a key through a section that does not exist", "sweep:\n  grid:\n    hostz.server.x: [1]\n",
			`t\.yaml:21:5: key "sweep\.grid\.hostz\.server\.x": no key "hostz" at `),
		Entry("a key the schema does not know", "sweep:\n  grid:\n    links[0].lossy: [0.1]\n",
			`sweep point links\[0\]\.lossy=0\.1 of variant default: t\.yaml:21:5: key "links\[0\]\.lossy": unknown key`),
		Entry("an index past a list", "sweep:\n  grid:\n    links[3].loss: [0.1]\n",
			`t\.yaml:21:5: key "sweep\.grid\.links\[3\]\.loss": "3" is not an index`),
		Entry("a value out of range", "sweep:\n  grid:\n    links[0].loss: [0.1, 2]\n",
			`sweep point links\[0\]\.loss=2 of variant default: t\.yaml:21:5: key "links\[0\]\.loss": 2 is not a probability`),
		Entry("a value of the wrong type, at the value", "sweep:\n  grid:\n    links[0].latency: [1us, fast]\n",
			`sweep point links\[0\]\.latency=fast of variant default: t\.yaml:21:29: key "links\[0\]\.latency": expected a duration`),
		Entry("a value that is not a list", "sweep:\n  grid:\n    links[0].loss: 0.1\n",
			`t\.yaml:21:5: key "sweep\.grid\.links\[0\]\.loss": expected a non-empty list`),
		Entry("an empty list", "sweep:\n  grid:\n    links[0].loss: []\n", `t\.yaml:21:5: .*expected a non-empty list`),
		Entry("a value given twice", "sweep:\n  grid:\n    links[0].loss: [0.1, 0.2, 0.1]\n",
			`t\.yaml:21:31: key "sweep\.grid\.links\[0\]\.loss\[2\]": value "0\.1" given twice`),
		Entry("a structure as a value", "sweep:\n  grid:\n    links[0].loss: [{a: 1}]\n",
			`t\.yaml:21:21: key "sweep\.grid\.links\[0\]\.loss\[0\]": a grid value is a scalar`),
		Entry("a grid that is not a mapping", "sweep:\n  grid: [1, 2]\n", `t\.yaml:20:9: key "sweep\.grid": expected a mapping`),
		Entry("a sweep of nothing", "sweep: {}\n", `key "sweep": a sweep needs a grid`),
		Entry("negative seeds", "sweep: {seeds: -1}\n", `t\.yaml:19:16: key "sweep\.seeds": -1 seeds`),
		Entry("an unknown key of the sweep", "sweep: {seedz: 2}\n", `key "sweep\.seedz": unknown key`),
		Entry("sweeping the variants section", "sweep:\n  grid:\n    variants.a: [1]\n", `key "sweep\.grid\.variants\.a": the grid overrides the scenario's keys`),
	)

	It("bounds the points, naming the limit", func() {
		_, err := scenario.Parse("t.yaml", []byte(base+"sweep: {seeds: 5000}\n"))
		Expect(err).To(MatchError(ContainSubstring(`key "sweep.seeds": 5000, over the limit of 1024`)))
		var vals []string
		for i := range 40 {
			vals = append(vals, fmt.Sprintf("%dus", i))
		}
		_, err = scenario.Parse("t.yaml", []byte(base+"sweep:\n  grid:\n    links[0].jitter: ["+strings.Join(vals, ", ")+"]\n  seeds: 30\n"))
		Expect(err).To(MatchError(ContainSubstring("make more than 1024 points, the limit (MaxSweepPoints")))
	})
})
