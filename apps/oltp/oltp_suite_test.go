package oltp_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestOLTP(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "oltp Suite")
}
