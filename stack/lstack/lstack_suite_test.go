package lstack_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLstack(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "lstack Suite")
}
