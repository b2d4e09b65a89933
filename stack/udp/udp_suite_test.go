package udp_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestUDP(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "UDP Suite")
}
