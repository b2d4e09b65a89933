package sockring_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSockring(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "sockring suite")
}
