package oltp_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/oltp"
	"github.com/savanna-sim/savanna/stack/lstack"
)

var _ = Describe("InnoDB's waits between a server and a client", func() {
	const (
		warmup = 5 * time.Millisecond
		window = 20 * time.Millisecond
	)
	newOrders := &oltp.Weights{} // New-Order takes the rest of 100

	It("makes two terminals on one warehouse's district rows wait for each other at the row lock", func() {
		b := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 4, terminals: 2, warehouses: 1, weights: newOrders, seed: 3})
		b.run(warmup, 5*window)
		ss, cs := b.server.Stats(b.eng.Now()), b.client.Stats(b.eng.Now())
		Expect(cs.Errors).To(BeZero())
		Expect(cs.Txn["new_order"].Count).To(BeNumerically(">", 50))
		// Each New-Order locks its district (d_next_o_id) from its
		// SELECT ... FOR UPDATE to its commit; the other terminal draws
		// the same district one time in ten and waits.
		Expect(ss.InnoDB.RowLockWaitsByTable["bmsql_district"]).To(BeNumerically(">", 0))
		Expect(ss.InnoDB.RowLockTimeUS).To(BeNumerically(">", 0))
		Expect(ss.InnoDB.Deadlocks).To(BeZero())

		off := false
		free := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 4, terminals: 2, warehouses: 1, weights: newOrders, seed: 3,
			innodb: oltp.InnoDBConfig{RowLocks: &off}})
		free.run(warmup, 5*window)
		Expect(free.server.Stats(free.eng.Now()).InnoDB.RowLockWaits).To(BeZero())
	})

	It("serialises Payments of one warehouse at its w_ytd row", func() {
		payments := &oltp.Weights{Payment: 100}
		b := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 4, terminals: 4, warehouses: 1, weights: payments, seed: 4})
		b.run(warmup, window)
		ss := b.server.Stats(b.eng.Now())
		// Four terminals, one warehouse row, held from the first
		// statement to the commit: nearly every Payment queues.
		n := b.client.Stats(b.eng.Now()).Txn["payment"].Count
		Expect(n).To(BeNumerically(">", 20))
		Expect(ss.InnoDB.RowLockWaitsByTable["bmsql_warehouse"]).To(BeNumerically(">", n/2))

		// The waits are real: without the lock the same terminals
		// complete many more Payments.
		off := false
		free := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 4, terminals: 4, warehouses: 1, weights: payments, seed: 4,
			innodb: oltp.InnoDBConfig{RowLocks: &off}})
		free.run(warmup, window)
		Expect(float64(n)).To(BeNumerically("<", 0.8*float64(free.client.Stats(free.eng.Now()).Txn["payment"].Count)))
	})

	It("makes a lone terminal's every commit wait one whole flush", func() {
		payments := &oltp.Weights{Payment: 100}
		const fsync = 2 * time.Millisecond // long, so that the wait stands out of the statements' time
		b := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 2, terminals: 1, weights: payments, seed: 5,
			innodb: oltp.InnoDBConfig{Fsync: fsync}})
		b.run(warmup, 4*window)
		in := b.server.Stats(b.eng.Now()).InnoDB
		Expect(in.GroupCommits).To(BeNumerically(">", 10))
		Expect(in.LogFlushes).To(Equal(in.GroupCommits))
		Expect(in.GroupMax).To(Equal(1))
		Expect(in.CommitWaitUS / float64(in.GroupCommits)).To(BeNumerically("~", 2000, 1e-6))
		// The client sees it: each Payment takes one fsync longer than
		// without the storage.
		free := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 2, terminals: 1, weights: payments, seed: 5})
		free.run(warmup, 4*window)
		slow, fast := b.client.Stats(b.eng.Now()).Txn["payment"].AvgMS, free.client.Stats(free.eng.Now()).Txn["payment"].AvgMS
		Expect(slow - fast).To(BeNumerically("~", 2.0, 0.2))
	})

	It("lets commits that arrive during one flush share the next fsync", func() {
		b := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 8, terminals: 32, seed: 6,
			innodb: oltp.InnoDBConfig{Fsync: 50 * time.Microsecond}})
		b.run(warmup, window)
		in := b.server.Stats(b.eng.Now()).InnoDB
		Expect(in.GroupCommits).To(BeNumerically(">", 50))
		Expect(in.GroupMax).To(BeNumerically(">", 1))
		Expect(in.GroupMean).To(BeNumerically(">", 1))
		Expect(in.LogFlushes).To(BeNumerically("<", in.GroupCommits))
		// No flush is longer than one fsync, and none waits longer than
		// the one under way plus its own.
		Expect(in.CommitWaitUS / float64(in.GroupCommits)).To(BeNumerically("<=", 100))
	})
})
