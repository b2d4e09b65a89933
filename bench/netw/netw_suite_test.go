package netw_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestNetw(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "bench/netw")
}
