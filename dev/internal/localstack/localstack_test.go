package localstack

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestReadPID(t *testing.T) {
	f := filepath.Join(t.TempDir(), "x.pid")
	for content, ok := range map[string]bool{"123\n": true, " 123 ": true, "abc": false, "-4": false, "0": false, "": false} {
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		pid, err := ReadPID(f)
		if ok != (err == nil) || (ok && pid != 123) {
			t.Errorf("ReadPID(%q) = %d, %v", content, pid, err)
		}
	}
	if _, err := ReadPID(filepath.Join(t.TempDir(), "missing.pid")); err == nil {
		t.Error("ReadPID(missing): want an error")
	}
}

func TestLivePID(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "self.pid")
	if err := os.WriteFile(self, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := LivePID(self); got != os.Getpid() {
		t.Errorf("LivePID(this process) = %d, want %d", got, os.Getpid())
	}
	gone := filepath.Join(dir, "gone.pid")
	if err := os.WriteFile(gone, []byte("2147483647\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := LivePID(gone); got != 0 {
		t.Errorf("LivePID(no such process) = %d, want 0", got)
	}
	if got := LivePID(filepath.Join(dir, "missing.pid")); got != 0 {
		t.Errorf("LivePID(missing file) = %d, want 0", got)
	}
}

func TestEnvironAddsTheStackAfterTheBase(t *testing.T) {
	base := make([]string, 1, 10) // spare capacity must not be shared
	base[0] = "DDB_PORT=1"
	e := Env{DDBPort: 18000, SQSPort: 19324, RunDir: "/r", EnvFile: "/r/env.sh", Extra: []string{"TABLE_NAME=t"}}
	got := e.Environ(base)
	want := []string{"DDB_PORT=1", "DDB_PORT=18000", "SQS_PORT=19324", "STACK_RUN_DIR=/r", "STACK_ENV_FILE=/r/env.sh", "TABLE_NAME=t"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if other := e.Environ(base); &other[1] == &got[1] {
		t.Errorf("two calls share their backing array")
	}
}

func TestServicesNameTheirPIDFiles(t *testing.T) {
	var got []string
	for _, s := range Services() {
		got = append(got, s.PIDFile("/run"))
	}
	if want := []string{"/run/ddb.pid", "/run/sqs.pid"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
