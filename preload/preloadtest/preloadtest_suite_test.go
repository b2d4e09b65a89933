package preloadtest

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestPreload(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "preload Suite")
}
