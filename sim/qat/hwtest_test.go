package qat_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/hwtest"
	"github.com/savanna-sim/savanna/sim/qat"
)

// The shared hw.CompressDev conformance specs (hw/hwtest) on the QAT
// model: the same spec text hw/dpdk runs on compress_isal and
// compress_zlib.
var _ = Describe("the QAT model against the shared hw contracts", func() {
	for _, model := range []string{"c62x", "4xxx"} {
		Context(model, func() {
			hwtest.CompressDevSpecs(func() *hwtest.CompressTarget {
				svc := newService(nil, qat.DeviceConfig{Model: model, Instances: 1})
				inst, err := svc.Attach(hw.ProcessID(100), 0)
				Expect(err).NotTo(HaveOccurred())
				// No process is bound to a meter, so the model is untimed:
				// a completion is ready at once and there is no clock to move.
				return &hwtest.CompressTarget{Dev: inst.Device(), QP: inst.QueuePair(), Advance: func() {}}
			})
		})
	}
})
