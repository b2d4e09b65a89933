package spsc_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSPSC(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "spsc suite")
}
