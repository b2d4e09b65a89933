package zlibshim_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestZlibshim(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "zlib shim Suite")
}
