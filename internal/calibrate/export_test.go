package calibrate

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
