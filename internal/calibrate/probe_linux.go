package calibrate

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ProcProbe reads the machine's load from /proc: the load average, the
// CPU time other processes and the hypervisor took over Window (while
// calibrate sleeps), and the wall-to-CPU ratio of a compute loop.
type ProcProbe struct {
	// Window is how long the /proc/stat sample lasts.
	Window time.Duration
	// Loop is how long the compute loop runs.
	Loop time.Duration
}

// Sample implements Probe.
func (p ProcProbe) Sample() (LoadSample, error) {
	s := LoadSample{CPUs: runtime.NumCPU()}
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return s, fmt.Errorf("load average: %w", err)
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return s, fmt.Errorf("/proc/loadavg: empty")
	}
	if s.Load1, err = strconv.ParseFloat(f[0], 64); err != nil {
		return s, fmt.Errorf("/proc/loadavg: %w", err)
	}
	t0, err := readStat()
	if err != nil {
		return s, err
	}
	time.Sleep(p.Window)
	t1, err := readStat()
	if err != nil {
		return s, err
	}
	if total := t1.total - t0.total; total > 0 {
		s.Others = float64((t1.total-t1.idle)-(t0.total-t0.idle)) / float64(total)
		s.Steal = float64(t1.steal-t0.steal) / float64(total)
	}
	s.WallPerCPU, err = computeLoopRatio(p.Loop)
	return s, err
}

// readStat reads the "cpu" line of /proc/stat: user nice system idle
// iowait irq softirq steal guest guest_nice (proc(5)); guest time is
// already inside user, so it is not added twice.
func readStat() (cpuTimes, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, fmt.Errorf("cpu times: %w", err)
	}
	return parseStat(data)
}

// computeLoopRatio runs a loop of integer work for about d on a locked
// thread and returns wall time / thread CPU time.
func computeLoopRatio(d time.Duration) (float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, err := threadCPU()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	x := uint64(1)
	for time.Since(start) < d {
		for range 10000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	wall := time.Since(start)
	c1, err := threadCPU()
	if err != nil {
		return 0, err
	}
	sinkU64(x)
	cpu := c1 - c0
	if cpu <= 0 {
		return 0, fmt.Errorf("compute loop: no CPU time measured")
	}
	return float64(wall) / float64(cpu), nil
}
