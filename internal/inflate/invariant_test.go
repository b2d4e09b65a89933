package inflate_test

import (
	"go/build"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Neutrality", func() {
	// zlibshim (a product package, which must not import sim/) and the
	// QAT model under sim/ (which should not depend on zlibshim) both use
	// this decoder, so it depends on neither: the standard library only.
	It("imports only the standard library", func() {
		pkg, err := build.ImportDir(".", 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(pkg.GoFiles)).To(BeNumerically(">=", 4))
		for _, path := range pkg.Imports {
			Expect(strings.Split(path, "/")[0]).NotTo(ContainSubstring("."), "imports %s", path)
		}
	})
})
