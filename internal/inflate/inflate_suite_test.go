package inflate_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestInflate(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Resumable inflate Suite")
}
