package oltp

import (
	"math"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the transaction mix", func() {
	const draws = 200000

	shares := func() [numTxnTypes]float64 {
		rng := rand.New(rand.NewPCG(1, 2))
		w := DefaultWeights()
		var n [numTxnTypes]float64
		for range draws {
			n[w.pick(rng)]++
		}
		for i := range n {
			n[i] /= draws
		}
		return n
	}()

	DescribeTable("draws each transaction in TPC-C's proportion",
		func(t TxnType, want float64) {
			// Three standard deviations of a binomial share.
			tol := 3 * math.Sqrt(want*(1-want)/draws)
			Expect(shares[t]).To(BeNumerically("~", want, tol))
		},
		Entry("New-Order 45%", NewOrder, 0.45),
		Entry("Payment 43%", Payment, 0.43),
		Entry("Order-Status 4%", OrderStatus, 0.04),
		Entry("Delivery 4%", Delivery, 0.04),
		Entry("Stock-Level 4%", StockLevel, 0.04),
	)

	DescribeTable("builds benchmarksql's statements, one round trip each, ending in COMMIT",
		func(t TxnType, mean, tol float64) {
			g := newTxnGen(rand.New(rand.NewPCG(3, 4)), 10)
			total := 0
			const n = 20000
			for range n {
				s := g.build(t, 1+g.rng.IntN(10))
				Expect(s[len(s)-1]).To(Equal("COMMIT"))
				total += len(s)
			}
			Expect(float64(total) / n).To(BeNumerically("~", mean, tol))
		},
		// 5 + 4 per order line (5..15, mean 10) + COMMIT.
		Entry("New-Order: 46", NewOrder, 46.0, 0.3),
		// 4 + 60% x 2 by name + 1 + 1 (+10% bad credit) + 1 + COMMIT.
		Entry("Payment: 9.3", Payment, 9.3, 0.02),
		// 60% x 2 by name or 1 by id, + 2 + COMMIT.
		Entry("Order-Status: 4.6", OrderStatus, 4.6, 0.02),
		// 7 per district x 10 + COMMIT.
		Entry("Delivery: 71", Delivery, 71.0, 0.0),
		Entry("Stock-Level: 3", StockLevel, 3.0, 0.0),
	)

	It("gives New-Order's statements the classes of its steps", func() {
		g := newTxnGen(rand.New(rand.NewPCG(5, 6)), 10)
		var by [numClasses]int
		s := g.build(NewOrder, 1)
		lines := (len(s) - 6) / 4
		for _, q := range s {
			by[Classify([]byte(q))]++
		}
		Expect(by[ClassPointSelect]).To(Equal(2 + 2*lines))
		Expect(by[ClassUpdate]).To(Equal(1 + lines))
		Expect(by[ClassInsert]).To(Equal(2 + lines))
		Expect(by[ClassCommit]).To(Equal(1))
		Expect(by[ClassRangeSelect]).To(BeZero())
	})

	It("refuses a mix over 100%", func() {
		Expect(Weights{Payment: 90, StockLevel: 20}.Validate()).To(HaveOccurred())
	})
})
