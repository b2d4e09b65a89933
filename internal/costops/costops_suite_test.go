package costops_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestCostops(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/costops")
}
