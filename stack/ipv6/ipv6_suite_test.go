package ipv6_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestIPv6(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "IPv6 Suite")
}
