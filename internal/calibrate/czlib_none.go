//go:build !(cgo && czlib)

package calibrate

// cZlibStatus says why C zlib is not measured.
func cZlibStatus() string {
	return "C zlib not built in: build simrun with cgo and -tags czlib (needs zlib1g-dev) to measure it"
}

func cZlibVersion() string { return "" }

// cZlibDeflate is never called without C zlib.
func cZlibDeflate(level int) Bench { return Bench{} }
