package resp_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestResp(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "resp Suite")
}
