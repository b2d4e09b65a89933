package hw_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestHW(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "hw Suite")
}
