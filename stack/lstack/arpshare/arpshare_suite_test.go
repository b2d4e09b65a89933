package arpshare_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestARPShare(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "arpshare suite")
}
