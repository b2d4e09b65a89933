package oltp_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/stack/lstack"
)

var _ = Describe("the client's own work", func() {
	It("charges each statement it builds and each result it takes on the client's core", func() {
		const terminals = 4
		b := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 2, terminals: terminals, seed: 4})
		b.eng.RunUntil(30 * time.Millisecond)
		answered := int64(b.client.Statements())
		Expect(answered).To(BeNumerically(">", 0))
		ops := b.clients.Stats().Ops
		Expect(ops[appcost.OLTPClientResult]).To(Equal(answered))
		// Each terminal has at most one statement unanswered.
		Expect(ops[appcost.OLTPClientStatement]).To(BeNumerically(">=", answered))
		Expect(ops[appcost.OLTPClientStatement]).To(BeNumerically("<=", answered+terminals))
		Expect(ops[appcost.ParseByte]).To(BeNumerically(">", 0))
		Expect(ops[lstack.CostEpollEvent]).To(BeNumerically(">", 0))
	})
})
