package shmlink_test

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestShmlink(t *testing.T) {
	// The test binary run again as the other process of a link (see
	// echoPeer in twoproc_test.go).
	if path := os.Getenv(echoEnv); path != "" {
		os.Exit(echoPeer(path))
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "shmlink suite")
}
