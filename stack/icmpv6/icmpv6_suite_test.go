package icmpv6_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestICMPv6(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ICMPv6 Suite")
}
