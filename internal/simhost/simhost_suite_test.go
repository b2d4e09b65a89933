package simhost_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSimhost(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "simhost Suite")
}
