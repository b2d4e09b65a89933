package echo_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestEcho(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "echo suite")
}
