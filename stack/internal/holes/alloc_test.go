package holes_test

import "testing"

// testingAllocs returns the average allocations of f over 100 runs.
func testingAllocs(f func()) float64 { return testing.AllocsPerRun(100, f) }
