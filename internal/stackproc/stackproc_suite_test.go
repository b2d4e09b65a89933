package stackproc

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestStackproc(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "stackproc Suite")
}
