package ipv4_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestIPv4(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "IPv4 Suite")
}
