package oltp_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/oltp"
	"github.com/savanna-sim/savanna/stack/lstack"
)

// BenchmarkParseResponse measures the client's parse of a three-column,
// one-row result set, the commonest response of the mix.
func BenchmarkParseResponse(b *testing.B) {
	rs, _ := oltp.AppendResultSet(nil, 1, "t", []string{"c0", "c1", "c2"}, [][]string{{"0000000000", "0000000000", "0000000000"}}, 1)
	b.ReportAllocs()
	b.SetBytes(int64(len(rs)))
	for b.Loop() {
		if _, _, err := oltp.ParseResponse(rs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClassify measures the server's classification of a New-Order
// stock update.
func BenchmarkClassify(b *testing.B) {
	sql := []byte("UPDATE bmsql_stock SET s_quantity = 50, s_ytd = s_ytd + 5, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + 0 WHERE s_w_id = 1 AND s_i_id = 4242")
	b.ReportAllocs()
	for b.Loop() {
		oltp.Classify(sql)
	}
}

// BenchmarkSimulatedStatements measures the whole model's speed: one
// iteration is 1 ms of simulated time of 16 terminals on 4 application
// cores; it reports simulated statements per wall second.
func BenchmarkSimulatedStatements(b *testing.B) {
	RegisterTestingT(b)
	bd := newBed(bedConfig{mode: lstack.ModeLstack, appCores: 4, terminals: 16, seed: 1})
	bd.eng.RunUntil(5 * time.Millisecond)
	bd.client.ResetStats(bd.eng.Now())
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		bd.eng.RunUntil(bd.eng.Now() + time.Millisecond)
	}
	b.ReportMetric(float64(bd.client.Statements())/time.Since(start).Seconds(), "stmts/s")
}
