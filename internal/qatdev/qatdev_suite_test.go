package qatdev_test

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// TestMain lets the test binary be a worker process: the specs re-execute
// it with childEnv set, and it then runs runChild instead of the specs.
func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

func TestQatdev(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/qatdev")
}
