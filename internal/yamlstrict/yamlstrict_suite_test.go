package yamlstrict_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestYamlstrict(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/yamlstrict Suite")
}
