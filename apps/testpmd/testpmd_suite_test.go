package testpmd_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestTestpmd(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "testpmd Suite")
}
