package checkmodel_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/checkmodel"
	"github.com/savanna-sim/savanna/sim/cost"
)

var _ = Describe("the simulated twin's kernel working set", func() {
	It("charges the kernel's per-connection misses once a thousand clients' sockets outgrow the core's cache", func() {
		// The same run without the working set: a file whose
		// kernel_conn_bytes is 0.
		data := string(cost.DefaultBytes())
		i := strings.Index(data, "  kernel_conn_bytes:\n    {value: ")
		Expect(i).To(BeNumerically(">=", 0))
		j := i + len("  kernel_conn_bytes:\n    {value: ")
		k := j + strings.Index(data[j:], ",")
		off := filepath.Join(GinkgoT().TempDir(), "no-working-set.yaml")
		Expect(os.WriteFile(off, []byte(data[:j]+"0"+data[k:]), 0o644)).To(Succeed())
		at := func(costFile string) checkmodel.Point {
			p, err := checkmodel.RunSim(checkmodel.SimConfig{System: checkmodel.SystemRedis, Command: "SET", Clients: 1000,
				Requests: 3000, DataSize: 3, CostFile: costFile})
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Notes).To(BeEmpty())
			return p
		}
		with, without := at(""), at(off)
		// The default file: 2176 bytes (34 lines) a connection against a
		// 512 KiB L2 at 25 ns a miss; 1000 connections leave 76% of the
		// lines out, ~0.65 us a segment, and each request has a segment
		// in and one out on each host.
		Expect(with.ServerCPUus - without.ServerCPUus).To(BeNumerically(">", 0.8))
		Expect(with.ClientCPUus - without.ClientCPUus).To(BeNumerically(">", 0.8))
	})
})
