package qat_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
	"github.com/savanna-sim/savanna/sim/qat"
)

var _ = Describe("configuration", func() {
	It("decodes the scenario keys strictly", func() {
		doc := []byte(`
devices:
  - model: dh895xcc
    numa_node: 1
    instances: 64
    vfs: 32
    driver: qat1.6-legacy
    completion: thread
    usdm: {max_huge_pages: 512, max_huge_pages_per_process: 16}
    faults:
      - {kind: engine_error, rate: 0.01}
legacy: {initial_fragmentation: 0.5}
`)
		var c qat.Config
		Expect(yamlstrict.Decode("host.yaml", doc, &c)).To(Succeed())
		Expect(c.Validate()).To(Succeed())
		Expect(c.Devices[0].USDM.MaxHugePagesPerProcess).To(Equal(16))
		Expect(c.Devices[0].Faults[0].Rate).To(Equal(0.01))

		err := yamlstrict.Decode("host.yaml", []byte("devices:\n  - model: c62x\n    instancez: 3\n"), &c)
		Expect(err).To(MatchError(ContainSubstring("instancez")))
	})

	DescribeTable("names the key at fault",
		func(d qat.DeviceConfig, msg string) {
			Expect(qat.Config{Devices: []qat.DeviceConfig{d}}.Validate()).To(MatchError(ContainSubstring(msg)))
		},
		Entry("model", qat.DeviceConfig{Model: "8970"}, `devices[0].model: unknown QAT model "8970"`),
		Entry("vfs", qat.DeviceConfig{Model: "c62x", VFs: 49}, "devices[0].vfs: 49 is not in 0..48"),
		Entry("vfs dh895xcc", qat.DeviceConfig{Model: "dh895xcc", VFs: 33}, "vfs: 33 is not in 0..32"),
		Entry("driver", qat.DeviceConfig{Model: "c62x", Driver: "oot1"}, "devices[0].driver:"),
		Entry("completion", qat.DeviceConfig{Model: "c62x", Completion: "irq"}, "devices[0].completion:"),
		Entry("ring", qat.DeviceConfig{Model: "c62x", RingDepth: -1}, "devices[0].ring_depth"),
		Entry("usdm", qat.DeviceConfig{Model: "c62x", USDM: qat.USDMConfig{MaxHugePages: -1}}, "devices[0].usdm.max_huge_pages"),
		Entry("fault kind", qat.DeviceConfig{Model: "c62x", Faults: []qat.FaultConfig{{Kind: "x"}}}, "devices[0].faults[0].kind"),
		Entry("fault rate", qat.DeviceConfig{Model: "c62x", Faults: []qat.FaultConfig{{Kind: qat.FaultEngineError}}}, "devices[0].faults[0].rate"),
	)

	It("rejects duplicate names, conflicting USDM limits on a node and a bad legacy model", func() {
		c := qat.Config{Devices: []qat.DeviceConfig{
			{Name: "a", Model: "c62x", USDM: qat.USDMConfig{MaxHugePages: 10}},
			{Name: "a", Model: "c62x", USDM: qat.USDMConfig{MaxHugePages: 20}},
		}, Legacy: qat.LegacyConfig{MaxFragmentation: 1}}
		err := c.Validate()
		Expect(err).To(MatchError(ContainSubstring(`devices[1].name: "a" is used twice`)))
		Expect(err).To(MatchError(ContainSubstring("devices[1].usdm")))
		Expect(err).To(MatchError(ContainSubstring("legacy.max_fragmentation")))
	})

	It("has the published shapes", func() {
		shape := map[string][2]int{}
		for _, m := range qat.Models() {
			shape[m.Name] = [2]int{int(m.PFs.Value), int(m.MaxVFsPerPF.Value)}
		}
		Expect(shape).To(Equal(map[string][2]int{"dh895xcc": {1, 32}, "c62x": {3, 16}, "4xxx": {1, 16}}))
	})
})
