package calibrate

import (
	"math/rand/v2"
	"strconv"
)

// corpus returns n bytes of deterministic, text-like data for the
// compression benchmarks: words drawn from a fixed vocabulary with a
// Zipf distribution (as word frequencies in natural text are), with
// markup, numbers and line breaks, which deflate compresses about 3:1 as
// it does HTML and logs. lzbench's silesia corpus is not shipped with
// Savanna; the figures are for this corpus and say so.
func corpus(n int) []byte {
	rng := rand.New(rand.NewPCG(18, 1))
	words := vocabulary()
	// Invented words widen the vocabulary to a natural text's few
	// thousand, so that matches are as long and as far apart as in
	// prose: a few dozen words would make every string repeat and send
	// the slow levels down endless hash chains.
	const letters = "etaoinshrdlucmfwypvbgkjqxz"
	for len(words) < 4000 {
		w := make([]byte, 2+rng.IntN(9))
		for i := range w {
			w[i] = letters[min(rng.IntN(26), rng.IntN(26))]
		}
		words = append(words, string(w))
	}
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(len(words)-1))
	out := make([]byte, 0, n+64)
	for len(out) < n {
		switch r := rng.IntN(100); {
		case r < 3:
			out = append(out, "\n<p class=\"item\">"...)
		case r < 6:
			out = strconv.AppendInt(out, int64(rng.IntN(100000)), 10)
			out = append(out, ' ')
		case r < 8:
			out = append(out, ".\n"...)
		default:
			out = append(out, words[zipf.Uint64()]...)
			out = append(out, ' ')
		}
	}
	return out[:n]
}

// vocabulary is the corpus's words.
func vocabulary() []string {
	return []string{
		"the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "with", "was", "on", "be",
		"by", "this", "are", "from", "at", "or", "an", "which", "not", "have", "has", "but", "were", "their",
		"packet", "server", "request", "response", "connection", "latency", "throughput", "kernel", "stack",
		"queue", "buffer", "socket", "thread", "core", "memory", "compression", "network", "driver", "device",
		"interrupt", "system", "client", "segment", "window", "timeout", "retransmission", "congestion",
		"application", "process", "scheduler", "allocation", "performance", "measurement", "configuration",
		"accelerator", "hardware", "software", "benchmark", "experiment", "distribution", "probability",
		"transmission", "acknowledgement", "implementation", "specification", "architecture", "interface",
	}
}
