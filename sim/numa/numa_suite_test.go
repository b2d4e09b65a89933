package numa_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestNuma(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "NUMA machine model Suite")
}
