package holes_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestHoles(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "stack/internal/holes")
}
