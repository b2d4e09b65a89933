package calibrate

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine names the machine a calibration ran on, as every price's
// source quotes it.
type Machine struct {
	// CPU is the model name from /proc/cpuinfo ("model name" on x86,
	// the implementer and part on Arm).
	CPU string
	// MHz is the clock /proc/cpuinfo reports (0 when it reports none);
	// default prices given in cycles are converted at it.
	MHz float64
	// CPUs is the number of CPUs the process may run on.
	CPUs int
	// Kernel is uname's release and machine.
	Kernel string
	// Go is the Go version that built the binary.
	Go string
	// Date is the day of the calibration (UTC).
	Date string
}

// String is the machine as a source quotes it.
func (m Machine) String() string {
	clock := ""
	if m.MHz > 0 {
		clock = fmt.Sprintf(" at %.0f MHz", m.MHz)
	}
	return fmt.Sprintf("%s (%d CPUs%s), Linux %s, %s, %s", m.CPU, m.CPUs, clock, m.Kernel, m.Go, m.Date)
}

// GHz is the clock at which cycles are converted: the machine's, or the
// default model's 2.6 GHz when /proc/cpuinfo gives none.
func (m Machine) GHz() float64 {
	if m.MHz > 0 {
		return m.MHz / 1000
	}
	return defaultGHz
}

// defaultGHz is the clock of the core the default model prices
// (sim/cost/data/default.yaml's description).
const defaultGHz = 2.6

// ThisMachine describes the machine the process runs on.
func ThisMachine(now time.Time) Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), Date: now.UTC().Format("2006-01-02"),
		Kernel: kernelRelease()}
	m.CPU, m.MHz = cpuInfo("/proc/cpuinfo")
	return m
}

// cpuInfo reads the first CPU's model and clock from a cpuinfo file.
func cpuInfo(path string) (model string, mhz float64) {
	f, err := os.Open(path)
	if err != nil {
		return "unknown CPU (" + err.Error() + ")", 0
	}
	defer f.Close()
	var implementer, part string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name", "Hardware":
			if model == "" {
				model = v
			}
		case "cpu MHz":
			if mhz == 0 {
				mhz, _ = strconv.ParseFloat(v, 64)
			}
		case "CPU implementer":
			implementer = v
		case "CPU part":
			part = v
		}
	}
	if model == "" && part != "" {
		model = "Arm implementer " + implementer + " part " + part
	}
	if model == "" {
		model = "unknown CPU"
	}
	return model, mhz
}
