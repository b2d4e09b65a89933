package oltp_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/oltp"
)

var _ = Describe("the rows a statement locks", func() {
	DescribeTable("names the row by its table and the WHERE clause's integers",
		func(sql, table, key string) {
			gt, gk, ok := oltp.LockTarget([]byte(sql), oltp.Classify([]byte(sql)))
			Expect(ok).To(Equal(key != ""))
			Expect(gt).To(Equal(table))
			Expect(gk).To(Equal(key))
		},
		Entry("New-Order's district, FOR UPDATE", "SELECT d_tax, d_next_o_id FROM bmsql_district WHERE d_w_id = 3 AND d_id = 7 FOR UPDATE", "bmsql_district", "bmsql_district:3:7"),
		Entry("New-Order's district update: the same row", "UPDATE bmsql_district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 3 AND d_id = 7", "bmsql_district", "bmsql_district:3:7"),
		Entry("Payment's warehouse: the SET's decimal is no key", "UPDATE bmsql_warehouse SET w_ytd = w_ytd + 12.50 WHERE w_id = 3", "bmsql_warehouse", "bmsql_warehouse:3"),
		Entry("Delivery's delete", "DELETE FROM bmsql_new_order WHERE no_w_id = 1 AND no_d_id = 2 AND no_o_id = 2500", "bmsql_new_order", "bmsql_new_order:1:2:2500"),
		Entry("a consistent read locks nothing", "SELECT d_next_o_id FROM bmsql_district WHERE d_w_id = 3 AND d_id = 7", "", ""),
		Entry("an insert locks nothing", "INSERT INTO bmsql_history (h_c_id) VALUES (1)", "", ""),
		Entry("an update of every row has no key", "UPDATE t SET a = 1", "", ""),
	)
})
