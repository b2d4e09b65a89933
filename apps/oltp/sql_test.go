package oltp_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/oltp"
)

var _ = Describe("statement classes", func() {
	DescribeTable("Classify",
		func(sql string, want oltp.Class) {
			Expect(oltp.Classify([]byte(sql))).To(Equal(want))
		},
		Entry("a key lookup", "SELECT i_price, i_name FROM bmsql_item WHERE i_id = 7", oltp.ClassPointSelect),
		Entry("a join of lookups", "SELECT c_discount, w_tax FROM bmsql_customer JOIN bmsql_warehouse ON (w_id = c_w_id) WHERE c_id = 1", oltp.ClassPointSelect),
		Entry("FOR UPDATE", "select d_tax from bmsql_district where d_id = 1 for update", oltp.ClassPointSelect),
		Entry("ORDER BY", "SELECT c_id FROM bmsql_customer WHERE c_last = 'X' ORDER BY c_first", oltp.ClassRangeSelect),
		Entry("an aggregate", "SELECT count(*) FROM bmsql_customer WHERE c_last = 'X'", oltp.ClassRangeSelect),
		Entry("a range", "SELECT count(*) FROM s WHERE q < 10", oltp.ClassRangeSelect),
		Entry("no table", "SELECT 1", oltp.ClassOther),
		Entry("a comment first", "/* tag */ UPDATE t SET a = 1", oltp.ClassUpdate),
		Entry("INSERT", "INSERT INTO t VALUES (1)", oltp.ClassInsert),
		Entry("REPLACE", "REPLACE INTO t VALUES (1)", oltp.ClassInsert),
		Entry("DELETE", "  delete from t where a = 1", oltp.ClassDelete),
		Entry("COMMIT", "COMMIT", oltp.ClassCommit),
		Entry("ROLLBACK", "rollback", oltp.ClassCommit),
		Entry("BEGIN", "BEGIN", oltp.ClassOther),
		Entry("empty", "", oltp.ClassOther),
		Entry("an unclosed comment", "/* UPDATE", oltp.ClassOther),
	)

	DescribeTable("SelectColumns counts the select list",
		func(sql string, want int) {
			Expect(oltp.SelectColumns([]byte(sql))).To(Equal(want))
		},
		Entry("one", "SELECT a FROM t", 1),
		Entry("three", "SELECT a, b, c FROM t", 3),
		Entry("a function's commas do not count", "SELECT coalesce(a, b), c FROM t", 2),
		Entry("no FROM", "SELECT 1, 2", 2),
	)

	It("charges each class its configured cost, defaults filling the gaps", func() {
		q := oltp.DefaultQueryCosts()
		Expect(q.Of(oltp.ClassPointSelect)).To(Equal(20 * time.Microsecond))
		Expect(q.Of(oltp.ClassUpdate)).To(Equal(65 * time.Microsecond))
		Expect(q.Of(oltp.ClassCommit)).To(Equal(30 * time.Microsecond))
		Expect(q.Of(oltp.ClassOther)).To(Equal(5 * time.Microsecond))
	})

	It("names the key of a bad cost", func() {
		q := oltp.QueryCosts{Update: -time.Microsecond}
		Expect(q.Validate()).To(MatchError(ContainSubstring("costs.update")))
		cfg := oltp.ServerConfig{Backlog: -1}
		Expect(cfg.Validate()).To(MatchError(ContainSubstring("backlog")))
		cc := oltp.ClientConfig{Weights: &oltp.Weights{Payment: 60, Delivery: 50}}
		Expect(cc.Validate()).To(MatchError(ContainSubstring("weights")))
		cc = oltp.ClientConfig{Terminals: -3}
		Expect(cc.Validate()).To(MatchError(ContainSubstring("terminals")))
	})
})
