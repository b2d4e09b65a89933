package qat_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestQAT(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "sim/qat")
}
