package ipv6_test

import "testing"

// testing_AllocsPerRun wraps testing.AllocsPerRun for Ginkgo specs.
func testing_AllocsPerRun(runs int, f func()) float64 { return testing.AllocsPerRun(runs, f) }
