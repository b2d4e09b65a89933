//go:build !dpdk

package dpdk_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw/dpdk"
)

// The build without the tag has its own one-spec suite: the dpdk suite
// (dpdk_suite_test.go) needs the EAL.
func TestNoDPDK(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "hw/dpdk without the dpdk tag")
}

var _ = Describe("the build without -tags dpdk", func() {
	It("has no backend and says which tag brings it", func() {
		Expect(dpdk.Available()).To(BeFalse())
		e, err := dpdk.Init(dpdk.Config{VDevs: []string{"net_ring0"}})
		Expect(e).To(BeNil())
		Expect(err).To(MatchError(ContainSubstring("built without -tags dpdk")))
		Expect(err).To(MatchError(ContainSubstring("go build -tags dpdk (needs libdpdk-dev)")))
		_, err = e.Port("net_ring0")
		Expect(err).To(MatchError(dpdk.ErrNotBuilt))
	})

	It("still validates the configuration the wiring carries", func() {
		Expect(dpdk.Config{Args: []string{"--no-huge", "--in-memory"}}.Validate()).
			To(MatchError(ContainSubstring("--in-memory cannot be combined with --no-huge")))
	})
})
