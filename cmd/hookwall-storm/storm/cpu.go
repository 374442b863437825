package storm

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// SelfCPUms is this process's user+system CPU time in ms (getrusage).
func SelfCPUms() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// clkTck is sysconf(_SC_CLK_TCK) on Linux.
const clkTck = 100

// ProcCPUms is utime+stime of pid from /proc/<pid>/stat (fields 14 and 15),
// in ms; false when it cannot be read.
func ProcCPUms(pid int) (float64, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
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
