package checkmodel_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestCheckmodel(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/checkmodel")
}
