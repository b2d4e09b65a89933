package oltp

import (
	"fmt"
	"math/rand/v2"
)

// TPC-C's five transactions as benchmarksql 5.0 runs them: the SQL of its
// jTPCCConnection prepared statements (client-side prepared by MySQL
// Connector/J, so each goes to the server as COM_QUERY text with its
// parameters in place), one statement per round trip, autocommit off and
// an explicit COMMIT at the end (TPC-C standard 5.11, clauses 2.4-2.8 for
// the transactions' steps).

// TxnType is one of TPC-C's transactions.
type TxnType uint8

// The transactions.
const (
	NewOrder TxnType = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
	numTxnTypes
)

// String returns the name figures use.
func (t TxnType) String() string {
	switch t {
	case NewOrder:
		return "new_order"
	case Payment:
		return "payment"
	case OrderStatus:
		return "order_status"
	case Delivery:
		return "delivery"
	}
	return "stock_level"
}

// Weights are the transaction mix in percent (benchmarksql's
// newOrderWeight, paymentWeight ...; New-Order takes the rest of 100).
type Weights struct {
	Payment     int `yaml:"payment"`
	OrderStatus int `yaml:"order_status"`
	Delivery    int `yaml:"delivery"`
	StockLevel  int `yaml:"stock_level"`
}

// DefaultWeights are benchmarksql 5.0's props defaults and TPC-C's
// minimum mix (clause 5.2.3): New-Order 45, Payment 43, the others 4.
func DefaultWeights() Weights {
	return Weights{Payment: 43, OrderStatus: 4, Delivery: 4, StockLevel: 4}
}

// Validate checks the mix; errors name the key.
func (w Weights) Validate() error {
	for _, f := range []struct {
		key string
		v   int
	}{{"payment", w.Payment}, {"order_status", w.OrderStatus}, {"delivery", w.Delivery}, {"stock_level", w.StockLevel}} {
		if f.v < 0 || f.v > 100 {
			return fmt.Errorf("weights.%s: %d is outside 0..100", f.key, f.v)
		}
	}
	if s := w.Payment + w.OrderStatus + w.Delivery + w.StockLevel; s > 100 {
		return fmt.Errorf("weights: the four sum to %d%%; New-Order takes the rest of 100%%", s)
	}
	return nil
}

// pick draws a transaction type from the mix, as benchmarksql's terminal
// does: one uniform number in [0, 100).
func (w Weights) pick(rng *rand.Rand) TxnType {
	r := rng.IntN(100)
	switch {
	case r < w.Payment:
		return Payment
	case r < w.Payment+w.OrderStatus:
		return OrderStatus
	case r < w.Payment+w.OrderStatus+w.Delivery:
		return Delivery
	case r < w.Payment+w.OrderStatus+w.Delivery+w.StockLevel:
		return StockLevel
	}
	return NewOrder
}

// nuRand is TPC-C's non-uniform random number (clause 2.1.6), with C
// fixed per run.
func nuRand(rng *rand.Rand, a, x, y, c int) int {
	return ((rng.IntN(a+1)|(x+rng.IntN(y-x+1)))+c)%(y-x+1) + x
}

// lastName is TPC-C's customer last name from a number (clause 4.3.2.3).
func lastName(n int) string {
	syl := [...]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}
	return syl[n/100%10] + syl[n/10%10] + syl[n%10]
}

// txnGen builds a transaction's statements for a terminal of a home
// warehouse.
type txnGen struct {
	rng        *rand.Rand
	warehouses int
	cLast, cID int // NURand's C constants
	cItem      int
}

func newTxnGen(rng *rand.Rand, warehouses int) *txnGen {
	return &txnGen{rng: rng, warehouses: warehouses, cLast: rng.IntN(256), cID: rng.IntN(1024), cItem: rng.IntN(8192)}
}

func (g *txnGen) customer() int { return nuRand(g.rng, 1023, 1, 3000, g.cID) }
func (g *txnGen) item() int     { return nuRand(g.rng, 8191, 1, 100000, g.cItem) }
func (g *txnGen) district() int { return 1 + g.rng.IntN(10) }
func (g *txnGen) last() string  { return lastName(nuRand(g.rng, 255, 0, 999, g.cLast)) }

// build returns the statements of one transaction of type t for home
// warehouse w.
func (g *txnGen) build(t TxnType, w int) []string {
	switch t {
	case NewOrder:
		return g.newOrder(w)
	case Payment:
		return g.payment(w)
	case OrderStatus:
		return g.orderStatus(w)
	case Delivery:
		return g.delivery(w)
	}
	return g.stockLevel(w)
}

func (g *txnGen) newOrder(w int) []string {
	d, c := g.district(), g.customer()
	ol := 5 + g.rng.IntN(11) // clause 2.4.1.3: 5..15 order lines
	o := 3001 + g.rng.IntN(100000)
	s := make([]string, 0, 6+4*ol)
	s = append(s,
		fmt.Sprintf("SELECT c_discount, c_last, c_credit, w_tax FROM bmsql_customer JOIN bmsql_warehouse ON (w_id = c_w_id) WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c),
		fmt.Sprintf("SELECT d_tax, d_next_o_id FROM bmsql_district WHERE d_w_id = %d AND d_id = %d FOR UPDATE", w, d),
		fmt.Sprintf("UPDATE bmsql_district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %d AND d_id = %d", w, d),
		fmt.Sprintf("INSERT INTO bmsql_oorder (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (%d, %d, %d, %d, '2026-01-01 00:00:00', %d, 1)", o, d, w, c, ol),
		fmt.Sprintf("INSERT INTO bmsql_new_order (no_o_id, no_d_id, no_w_id) VALUES (%d, %d, %d)", o, d, w),
	)
	for n := 1; n <= ol; n++ {
		i := g.item()
		sw := w
		if g.warehouses > 1 && g.rng.IntN(100) == 0 { // clause 2.4.1.5: 1% remote
			sw = 1 + g.rng.IntN(g.warehouses)
		}
		q := 1 + g.rng.IntN(10)
		s = append(s,
			fmt.Sprintf("SELECT i_price, i_name, i_data FROM bmsql_item WHERE i_id = %d", i),
			fmt.Sprintf("SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM bmsql_stock WHERE s_w_id = %d AND s_i_id = %d FOR UPDATE", sw, i),
			fmt.Sprintf("UPDATE bmsql_stock SET s_quantity = %d, s_ytd = s_ytd + %d, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + %d WHERE s_w_id = %d AND s_i_id = %d", 50, q, b2i(sw != w), sw, i),
			fmt.Sprintf("INSERT INTO bmsql_order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (%d, %d, %d, %d, %d, %d, %d, %d.%02d, 'dist-info-xxxxxxxxxxxxx')", o, d, w, n, i, sw, q, g.rng.IntN(100), g.rng.IntN(100)),
		)
	}
	return append(s, "COMMIT")
}

func (g *txnGen) customerByName(s []string, w, d int, full bool) []string {
	last := g.last()
	s = append(s, fmt.Sprintf("SELECT count(*) AS num_cust FROM bmsql_customer WHERE c_w_id = %d AND c_d_id = %d AND c_last = '%s'", w, d, last))
	cols := "c_id"
	if full {
		cols = "c_id, c_first, c_middle, c_last, c_balance"
	}
	return append(s, fmt.Sprintf("SELECT %s FROM bmsql_customer WHERE c_w_id = %d AND c_d_id = %d AND c_last = '%s' ORDER BY c_first", cols, w, d, last))
}

func (g *txnGen) payment(w int) []string {
	d := g.district()
	amount := fmt.Sprintf("%d.%02d", 1+g.rng.IntN(5000), g.rng.IntN(100))
	s := make([]string, 0, 11)
	s = append(s,
		fmt.Sprintf("UPDATE bmsql_warehouse SET w_ytd = w_ytd + %s WHERE w_id = %d", amount, w),
		fmt.Sprintf("SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM bmsql_warehouse WHERE w_id = %d", w),
		fmt.Sprintf("UPDATE bmsql_district SET d_ytd = d_ytd + %s WHERE d_w_id = %d AND d_id = %d", amount, w, d),
		fmt.Sprintf("SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM bmsql_district WHERE d_w_id = %d AND d_id = %d", w, d),
	)
	if g.rng.IntN(100) < 60 { // clause 2.5.1.2: 60% by last name
		s = g.customerByName(s, w, d, false)
	}
	c := g.customer()
	s = append(s, fmt.Sprintf("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM bmsql_customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d FOR UPDATE", w, d, c))
	if g.rng.IntN(100) < 10 { // 10% of customers have bad credit
		s = append(s,
			fmt.Sprintf("SELECT c_data FROM bmsql_customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c),
			fmt.Sprintf("UPDATE bmsql_customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s, c_payment_cnt = c_payment_cnt + 1, c_data = 'payment-data' WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", amount, amount, w, d, c))
	} else {
		s = append(s, fmt.Sprintf("UPDATE bmsql_customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", amount, amount, w, d, c))
	}
	s = append(s, fmt.Sprintf("INSERT INTO bmsql_history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (%d, %d, %d, %d, %d, '2026-01-01 00:00:00', %s, 'history-data')", d, w, c, d, w, amount))
	return append(s, "COMMIT")
}

func (g *txnGen) orderStatus(w int) []string {
	d := g.district()
	s := make([]string, 0, 5)
	if g.rng.IntN(100) < 60 { // clause 2.6.1.2
		s = g.customerByName(s, w, d, true)
	} else {
		s = append(s, fmt.Sprintf("SELECT c_first, c_middle, c_last, c_balance FROM bmsql_customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, g.customer()))
	}
	c := g.customer()
	s = append(s,
		fmt.Sprintf("SELECT o_id, o_entry_d, o_carrier_id FROM bmsql_oorder WHERE o_w_id = %d AND o_d_id = %d AND o_c_id = %d AND o_id = (SELECT max(o_id) FROM bmsql_oorder WHERE o_w_id = %d AND o_d_id = %d AND o_c_id = %d)", w, d, c, w, d, c),
		fmt.Sprintf("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM bmsql_order_line WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number", w, d, 1+g.rng.IntN(3000)),
	)
	return append(s, "COMMIT")
}

func (g *txnGen) delivery(w int) []string {
	carrier := 1 + g.rng.IntN(10)
	s := make([]string, 0, 71)
	for d := 1; d <= 10; d++ {
		o, c := 2101+g.rng.IntN(900), g.customer()
		s = append(s,
			fmt.Sprintf("SELECT no_o_id FROM bmsql_new_order WHERE no_w_id = %d AND no_d_id = %d ORDER BY no_o_id ASC", w, d),
			fmt.Sprintf("DELETE FROM bmsql_new_order WHERE no_w_id = %d AND no_d_id = %d AND no_o_id = %d", w, d, o),
			fmt.Sprintf("SELECT o_c_id FROM bmsql_oorder WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d", w, d, o),
			fmt.Sprintf("UPDATE bmsql_oorder SET o_carrier_id = %d WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d", carrier, w, d, o),
			fmt.Sprintf("UPDATE bmsql_order_line SET ol_delivery_d = '2026-01-01 00:00:00' WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", w, d, o),
			fmt.Sprintf("SELECT sum(ol_amount) AS sum_ol_amount FROM bmsql_order_line WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", w, d, o),
			fmt.Sprintf("UPDATE bmsql_customer SET c_balance = c_balance + 100.00, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c),
		)
	}
	return append(s, "COMMIT")
}

func (g *txnGen) stockLevel(w int) []string {
	d := g.district()
	return []string{
		fmt.Sprintf("SELECT d_next_o_id FROM bmsql_district WHERE d_w_id = %d AND d_id = %d", w, d),
		fmt.Sprintf("SELECT count(*) AS low_stock FROM (SELECT s_w_id, s_i_id, s_quantity FROM bmsql_stock WHERE s_w_id = %d AND s_quantity < %d AND s_i_id IN (SELECT ol_i_id FROM bmsql_district JOIN bmsql_order_line ON ol_w_id = d_w_id AND ol_d_id = d_id AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id WHERE d_w_id = %d AND d_id = %d)) AS L", w, 10+g.rng.IntN(11), w, d),
		"COMMIT",
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
