package yamlstrict_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
)

// laughs is a "billion laughs": n levels of nine aliases to the level
// below, under a key the schema walks.
func laughs(n int) string {
	var b strings.Builder
	b.WriteString("name: n\nby_name:\n  a0: &a0 {rate: 1}\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 9), ", "))
	}
	return b.String()
}

var _ = Describe("aliases", func() {
	It("refuses an alias bomb before walking it, naming the alias (issue 17, finding 4)", func() {
		var d doc
		err := yamlstrict.Decode("f.yaml", []byte(laughs(9)), &d)
		Expect(err).To(MatchError(HavePrefix(`f.yaml:7:22: alias *a3: the document reaches more than 10000 nodes through aliases`)))
	})

	It("refuses an alias cycle", func() {
		_, err := yamlstrict.Parse("f.yaml", []byte("items: &a [*a]\n"))
		Expect(err).To(MatchError(ContainSubstring("through aliases")))
	})

	It("accepts the few aliases a hand-written file has", func() {
		var d doc
		Expect(yamlstrict.Decode("f.yaml", []byte("items: [&x {rate: 2}, *x, *x]\n"), &d)).To(Succeed())
		Expect(d.Items).To(HaveLen(3))
	})
})

var _ = Describe("Opaque", func() {
	DescribeTable("keeps file, line and column and drops the document's text",
		func(src, want string) {
			var d doc
			err := yamlstrict.Opaque(yamlstrict.Decode("secret", []byte(src), &d))
			Expect(err).To(MatchError(want))
		},
		Entry("a scalar", "root:x:0:0:root:/root:/bin/bash\n", `secret:1:1: a value of the wrong type or shape (the file's text is not shown)`),
		Entry("an unknown key", "name: n\nhunter2: x\n", `secret:2:1: unknown key (the file's text is not shown)`),
		Entry("a bad value", "items: [{rate: hunter2}]\n", `secret:1:16: a value of the wrong type or shape (the file's text is not shown)`),
		Entry("a syntax error", "name: [hunter2\n", `secret:1: not valid YAML (the file's text is not shown)`),
	)
})
