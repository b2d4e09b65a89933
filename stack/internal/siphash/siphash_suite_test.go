package siphash_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSiphash(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "siphash suite")
}
