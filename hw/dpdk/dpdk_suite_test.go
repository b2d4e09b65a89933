//go:build dpdk

package dpdk_test

import (
	"fmt"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw/dpdk"
)

func TestDPDK(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "hw/dpdk")
}

// memifSocket is the abstract socket the memif pair talks over; the
// process id keeps parallel test processes apart.
func memifSocket() string { return fmt.Sprintf("/savanna-memif-%d.sock", os.Getpid()) }

// suiteConfig is the EAL configuration of CI: no hugepages, no PCI, no
// shared config file (so parallel test processes do not collide), one
// lcore, and software devices only.
func suiteConfig() dpdk.Config {
	return dpdk.Config{
		Args: []string{"--no-huge", "-m", "256", "--no-pci", "--no-shconf", "-l", "0",
			"--no-telemetry", "--log-level=lib.eal:error"},
		VDevs: []string{
			"net_ring0",
			"net_memif0,role=server,id=0,socket=" + memifSocket(),
			"net_memif1,role=client,id=0,socket=" + memifSocket(),
			// A second pair for the real-time driver's specs (rt_test.go),
			// which configure and start their ports themselves.
			"net_memif2,role=server,id=1,socket=" + memifSocket() + ".rt",
			"net_memif3,role=client,id=1,socket=" + memifSocket() + ".rt",
			// A third pair for the shared conformance specs (hwtest_test.go).
			"net_memif4,role=server,id=2,socket=" + memifSocket() + ".hwtest",
			"net_memif5,role=client,id=2,socket=" + memifSocket() + ".hwtest",
			"compress_zlib",
			"compress_isal",
		},
	}
}

// eal is initialised once for the process, in TestMain, since
// rte_eal_init succeeds only once per process and the specs, benchmarks
// and fuzz targets all need it.
var eal *dpdk.EAL

func TestMain(m *testing.M) {
	var err error
	eal, err = dpdk.Init(suiteConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, "hw/dpdk tests:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
