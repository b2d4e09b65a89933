package ndp_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestNDP(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "NDP Suite")
}
