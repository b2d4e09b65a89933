package archtest_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestArchtest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/archtest")
}
