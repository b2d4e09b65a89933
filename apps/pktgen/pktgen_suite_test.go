package pktgen_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestPktgen(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "pktgen Suite")
}
