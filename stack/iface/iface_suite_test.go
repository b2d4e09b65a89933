package iface_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestIface(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Iface Suite")
}
