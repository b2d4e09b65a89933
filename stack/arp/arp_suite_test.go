package arp_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestARP(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ARP Suite")
}
