package rtc_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRTC(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rtc suite")
}
