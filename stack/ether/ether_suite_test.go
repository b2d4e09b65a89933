package ether_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestEther(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Ethernet Suite")
}
