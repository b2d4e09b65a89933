package zlibshim_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Architecture invariant 1", func() {
	It("keeps the shim free of sim/ imports: it works only against the hw contracts", func() {
		files, err := filepath.Glob("*.go")
		Expect(err).NotTo(HaveOccurred())
		// The decoder and the seeded Adler-32 the shim uses live in
		// internal/inflate and internal/adler, shared with the QAT model;
		// they must keep to the same rule.
		for _, dir := range []string{"../internal/inflate", "../internal/adler"} {
			more, _ := filepath.Glob(dir + "/*.go")
			files = append(files, more...)
		}
		checked := 0
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			Expect(err).NotTo(HaveOccurred())
			for _, imp := range ast.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				Expect(path).NotTo(HavePrefix("github.com/savanna-sim/savanna/sim"), f)
				if strings.HasPrefix(path, "github.com/savanna-sim/savanna/") {
					Expect(path).To(Or(Equal("github.com/savanna-sim/savanna/hw"),
						Equal("github.com/savanna-sim/savanna/internal/inflate"),
						Equal("github.com/savanna-sim/savanna/internal/adler"),
						HavePrefix("github.com/savanna-sim/savanna/zlibshim")), f)
				}
			}
			checked++
		}
		Expect(checked).To(BeNumerically(">", 10))
	})
})
