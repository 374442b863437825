package cpuclock

import (
	"os"
	"testing"
)

func TestSelfGrowsWithWork(t *testing.T) {
	before := Self()
	x := 0
	for i := range 50_000_000 {
		x += i % 7
	}
	if after := Self(); !(after > before) || x == 0 {
		t.Errorf("CPU time did not grow: %v → %v", before, after)
	}
}

func TestProcReadsThisProcess(t *testing.T) {
	ms, ok := Proc(os.Getpid())
	if !ok || ms < 0 {
		t.Fatalf("Proc(self) = %v, %v", ms, ok)
	}
	if _, ok := Proc(0); ok {
		t.Error("Proc(0) reported a value")
	}
	if _, ok := Proc(1 << 30); ok {
		t.Error("Proc of a missing pid reported a value")
	}
}

func TestMachineBusy(t *testing.T) {
	a, ok := MachineBusy()
	if !ok || a <= 0 {
		t.Fatalf("MachineBusy() = %v, %v", a, ok)
	}
}

func TestLoadAveragesReadsThree(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		t.Skip("no /proc/loadavg")
	}
	l := LoadAverages()
	if len(l) != 3 || l[0] < 0 || l[1] < 0 || l[2] < 0 {
		t.Fatalf("LoadAverages() = %v, want three non-negative averages", l)
	}
}
