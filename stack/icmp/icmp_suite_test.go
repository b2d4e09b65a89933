package icmp_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestICMP(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ICMP Suite")
}
