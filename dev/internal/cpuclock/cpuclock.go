// Package cpuclock reads CPU time, for the benchmark tools (hookwall-peer,
// hookwall-storm): this process's, from getrusage, and another process's
// (DynamoDB Local's), from /proc/<pid>/stat. Linux only.
package cpuclock

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Self returns this process's user+system CPU time in ms (NaN if getrusage fails).
func Self() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// clkTck is sysconf(_SC_CLK_TCK) on Linux.
const clkTck = 100

// Proc returns utime+stime of pid from /proc/<pid>/stat (fields 14 and 15)
// in ms; false when it cannot be read.
func Proc(pid int) (float64, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if i < 0 || i+2 > len(s) {
		return 0, false
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return (u + st) * 1000 / clkTck, true
}

// MachineBusy returns the busy CPU time of the whole machine, all cores, in
// ms (/proc/stat: all but idle and iowait); false when it cannot be read.
func MachineBusy() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "cpu" {
		return 0, false
	}
	f = f[1:]
	var total, idle float64
	for i := 0; i < 8 && i < len(f); i++ {
		v, _ := strconv.ParseFloat(f[i], 64)
		total += v
		if i == 3 || i == 4 {
			idle += v
		}
	}
	return (total - idle) * 1000 / clkTck, true
}

// LoadAverages returns the machine's 1-, 5- and 15-minute load averages
// (/proc/loadavg), or nil when they cannot be read.
func LoadAverages() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		if out[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return nil
		}
	}
	return out
}
