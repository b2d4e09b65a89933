package checkmodel

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of /proc/PID/stat's utime and stime: USER_HZ,
// what sysconf(_SC_CLK_TCK) returns, 100 on every architecture Linux
// builds for today (include/asm-generic/param.h; proc(5), "utime").
const userHZ = 100

// ParseStat returns the CPU time (utime + stime) a /proc/PID/stat line
// gives. The command name (field 2) is in parentheses and may itself hold
// spaces and parentheses, so the fields are counted from the last ')'
// (proc(5)).
func ParseStat(data []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc stat: no ')' closing the command name")
	}
	fields := bytes.Fields(data[end+1:])
	// After the name: state (field 3) ... utime (14), stime (15).
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name, need %d", len(fields), stime+1)
	}
	var ticks uint64
	for _, i := range []int{utime, stime} {
		v, err := strconv.ParseUint(string(fields[i]), 10, 63)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: field %d %q: %w", i+3, fields[i], err)
		}
		ticks += v
	}
	if ticks > uint64(1<<62)/uint64(time.Second/userHZ) {
		return 0, fmt.Errorf("/proc stat: %d ticks overflow a duration", ticks)
	}
	return time.Duration(ticks) * (time.Second / userHZ), nil
}

// ProcCPU returns the CPU time process pid has used so far, all its
// threads together (/proc/PID/stat).
func ProcCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	d, err := ParseStat(data)
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w", pid, err)
	}
	return d, nil
}
