package nic_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestNIC(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "sim/nic")
}
