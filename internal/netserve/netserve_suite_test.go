package netserve_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestNetserve(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "netserve")
}
