package oltp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("InnoDB's waits", func() {
	const us = time.Microsecond

	It("queues a second transaction behind the row's owner until it commits, and hands the row on in arrival order", func() {
		lt := newLockTable()
		srv := &Server{sched: NewScheduler()}
		a, b, c := &trx{th: &thread{srv: srv}}, &trx{th: &thread{srv: srv}}, &trx{th: &thread{srv: srv}}
		ok, dead := lt.acquire(a, "bmsql_district", "bmsql_district:1:1", 0)
		Expect(ok).To(BeTrue())
		Expect(dead).To(BeFalse())
		// The owner asks again (New-Order's UPDATE after its FOR UPDATE).
		ok, _ = lt.acquire(a, "bmsql_district", "bmsql_district:1:1", 5*us)
		Expect(ok).To(BeTrue())
		ok, dead = lt.acquire(b, "bmsql_district", "bmsql_district:1:1", 10*us)
		Expect(ok).To(BeFalse())
		Expect(dead).To(BeFalse())
		ok, _ = lt.acquire(c, "bmsql_district", "bmsql_district:1:1", 20*us)
		Expect(ok).To(BeFalse())
		Expect(lt.Stats().RowLockWaiting).To(Equal(2))

		lt.release(a, 110*us)
		Expect(b.waiting).To(BeNil())
		Expect(c.waiting).NotTo(BeNil(), "c came later: it waits for b")
		Expect(lt.rows["bmsql_district:1:1"].owner).To(BeIdenticalTo(b))
		Expect(srv.sched.Stats().Wakeups).To(BeEquivalentTo(1))
		lt.release(b, 150*us)
		Expect(lt.rows["bmsql_district:1:1"].owner).To(BeIdenticalTo(c))
		lt.release(c, 160*us)
		s := lt.Stats()
		Expect(s.RowLockWaits).To(BeEquivalentTo(2))
		Expect(s.RowLockWaitsByTable).To(Equal(map[string]uint64{"bmsql_district": 2}))
		// b waited 100 us, c 130 us.
		Expect(s.RowLockTimeUS).To(BeNumerically("~", 230, 1e-9))
		Expect(s.RowLocksHeld).To(BeZero())
	})

	It("refuses a wait that would close a cycle (a deadlock), and counts it", func() {
		lt := newLockTable()
		srv := &Server{sched: NewScheduler()}
		a, b := &trx{th: &thread{srv: srv}}, &trx{th: &thread{srv: srv}}
		lt.acquire(a, "s", "s:1", 0)
		lt.acquire(b, "s", "s:2", 0)
		ok, dead := lt.acquire(a, "s", "s:2", us)
		Expect(ok || dead).To(BeFalse())
		ok, dead = lt.acquire(b, "s", "s:1", 2*us)
		Expect(ok).To(BeFalse())
		Expect(dead).To(BeTrue())
		Expect(lt.Stats().Deadlocks).To(BeEquivalentTo(1))
	})

	It("makes a lone commit wait a whole flush, and commits in one flush's window share the next", func() {
		g := groupCommit{dur: 50 * us}
		Expect(g.join(0)).To(Equal(50*us), "the flusher is idle: a flush of its own")
		Expect(g.join(10*us)).To(Equal(100*us), "a flush is under way: the next one")
		Expect(g.join(20*us)).To(Equal(100*us), "the same next one")
		Expect(g.join(49 * us)).To(Equal(100 * us))
		Expect(g.join(200*us)).To(Equal(250*us), "idle again")
		Expect(g.flushes).To(BeEquivalentTo(3))
		Expect(g.commits).To(BeEquivalentTo(5))
		Expect(g.max).To(Equal(3))
		Expect(g.waitUS).To(BeNumerically("~", 50+90+80+51+50, 1e-9))
	})

	It("counts the redo fsync, and the binary log's when it is on", func() {
		one, zero := 1, 0
		c := InnoDBConfig{Fsync: 40 * us}.withDefaults()
		Expect(c.flushTime()).To(Equal(40 * us))
		c.LogBin = true
		Expect(c.flushTime()).To(Equal(80 * us))
		c.SyncBinlog = &zero
		Expect(c.flushTime()).To(Equal(40 * us))
		c.FlushLogAtTrxCommit = &zero
		Expect(c.flushTime()).To(BeZero())
		c.FlushLogAtTrxCommit = &one
		two := 3
		c.FlushLogAtTrxCommit = &two
		Expect(c.Validate()).To(MatchError(ContainSubstring("innodb.flush_log_at_trx_commit")))
	})
})
