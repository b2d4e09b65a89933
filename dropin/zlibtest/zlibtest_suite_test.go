package zlibtest_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestZlibtest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "zlib drop-in Suite")
}
