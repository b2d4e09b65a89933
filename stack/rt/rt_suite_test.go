package rt_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRT(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rt suite")
}
