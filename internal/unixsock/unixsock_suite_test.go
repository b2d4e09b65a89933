package unixsock_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestUnixsock(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/unixsock")
}
