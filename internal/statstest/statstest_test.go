package statstest_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/statstest"
)

func TestStatstest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "statstest Suite")
}

type Inner struct{ Lost, InUse uint64 }

type stats struct {
	Inner
	Busy  time.Duration
	Queue []Inner
	Peak  int
	Name  string
}

var _ = Describe("Problems", func() {
	before := stats{Inner: Inner{Lost: 3, InUse: 2}, Busy: time.Second, Queue: []Inner{{1, 4}}, Peak: 9, Name: "q"}

	It("passes a reset by the rule, and flattens paths as the JSON reads", func() {
		after := stats{Inner: Inner{InUse: 2}, Queue: []Inner{{0, 4}}, Peak: 4, Name: "q"}
		Expect(statstest.Problems(before, after, []string{"InUse", "Queue.InUse", "Name"}, []string{"Peak"})).To(BeEmpty())
		Expect(statstest.Leaves(after)).To(HaveKey("Queue[0].Lost"))
	})

	It("names a counter not reset, a gauge changed and a listed field that does not exist", func() {
		after := stats{Inner: Inner{Lost: 1, InUse: 0}, Queue: []Inner{{0, 4}}, Name: "q"}
		Expect(statstest.Problems(before, after, []string{"InUse", "Queue.InUse", "Name", "Gone"}, []string{"Peak"})).To(Equal([]string{
			"counter Lost not reset: 1",
			"gauge InUse changed from 2 to 0",
			"no field Gone",
		}))
	})
})
