package ringdev_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRingdev(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ringdev suite")
}
