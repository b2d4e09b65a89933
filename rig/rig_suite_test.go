package rig_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRig(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rig Suite")
}
