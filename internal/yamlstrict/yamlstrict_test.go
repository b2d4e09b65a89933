package yamlstrict_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
)

type leaf struct {
	Rate float64       `yaml:"rate"`
	Wait time.Duration `yaml:"wait"`
}

type embedded struct {
	Kind string `yaml:"kind"`
}

type doc struct {
	embedded `yaml:",inline"`
	Name     string          `yaml:"name"`
	Items    []leaf          `yaml:"items"`
	ByName   map[string]leaf `yaml:"by_name"`
	On       bool            `yaml:"on"`
}

var _ = Describe("strict decoding", func() {
	It("decodes a valid document, inline fields included", func() {
		var d doc
		Expect(yamlstrict.Decode("f.yaml", []byte("kind: k\nname: n\nitems: [{rate: 1.5, wait: 10us}]\nby_name: {a: {rate: 2}}\non: true\n"), &d)).To(Succeed())
		Expect(d.Kind).To(Equal("k"))
		Expect(d.Items[0].Wait).To(Equal(10 * time.Microsecond))
		Expect(d.ByName["a"].Rate).To(Equal(2.0))
	})

	DescribeTable("names file, line, column and key",
		func(src, want string) {
			var d doc
			Expect(yamlstrict.Decode("f.yaml", []byte(src), &d)).To(MatchError(want))
		},
		Entry("unknown key", "name: n\nnmae: x\n", `f.yaml:2:1: key "nmae": unknown key; expected one of: by_name, items, kind, name, on`),
		Entry("nested unknown key", "items:\n  - {rate: 1, wiat: 2s}\n", `f.yaml:2:15: key "items[0].wiat": unknown key; expected one of: rate, wait`),
		Entry("bad number", "items: [{rate: fast}]\n", `f.yaml:1:16: key "items[0].rate": expected a number, found "fast"`),
		Entry("bad duration", "by_name: {a: {wait: soon}}\n", `f.yaml:1:21: key "by_name.a.wait": expected a duration such as 10us or 2s, found "soon"`),
		Entry("bad bool", "on: maybe\n", `f.yaml:1:5: key "on": expected true or false, found "maybe"`),
		Entry("list for a mapping", "by_name: [1]\n", `f.yaml:1:10: key "by_name": expected a mapping, found a list`),
		Entry("syntax error", "name: [\n", `f.yaml:1: did not find expected node content`),
		Entry("empty document", "", `f.yaml: empty document`),
	)
})

func FuzzDecode(f *testing.F) {
	f.Add([]byte("kind: k\nname: n\nitems: [{rate: 1.5, wait: 10us}]\n"))
	f.Add([]byte("by_name: {a: {rate: 2}}\non: true\n"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d doc
		_ = yamlstrict.Decode("fuzz.yaml", data, &d)
	})
}
