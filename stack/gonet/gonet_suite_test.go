package gonet_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestGonet(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "gonet suite")
}
