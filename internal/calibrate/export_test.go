package calibrate

import "time"

// Internals the specs reach.
var (
	ParseStat = func(data []byte) (total, idle, steal uint64, err error) {
		t, err := parseStat(data)
		return t.total, t.idle, t.steal, err
	}
	CPUInfo = cpuInfo
	Corpus  = corpus
)

// Skip is the error a benchmark returns when it cannot run here.
func Skip(why string) error { return errSkip(why) }

// TimeBatches is timeBatches with its budget and clock given.
func TimeBatches(run, batchTime time.Duration, clk func() (time.Duration, error), f func(n int) (float64, error)) (float64, float64, error) {
	return timeBatches(budget{run: run, batch: batchTime}, clk, f)
}
