package numa

// Exports of the sysfs parsers for the fuzz tests of package numa_test.
// Test-only and never assigned to.
var (
	ParseMemTotal    = parseMemTotal
	ParseDistanceRow = parseDistanceRow
	ParseCPUInfoMHz  = parseCPUInfoMHz
)
