package obs

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// lines decodes every JSON line of buf.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON line: %v: %q", err, line)
		}
		out = append(out, rec)
	}
	return out
}

func TestWithAttrsAddsRequestAttributesToEveryRecord(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, slog.LevelInfo)
	ctx := WithAttrs(context.Background(), slog.String(KeyRequestID, "r-1"), slog.String(KeyTenant, "acme"))
	ctx2 := WithAttrs(ctx, slog.String(KeyEventKey, "line#acme#e1"))
	log.InfoContext(ctx, "first", "n", 1)
	log.With(slog.String("component", "intake")).WarnContext(ctx2, "second")
	log.Info("no context attributes")
	recs := lines(t, &buf)
	if len(recs) != 3 {
		t.Fatalf("got %d lines, want 3", len(recs))
	}
	want := []map[string]any{
		{"msg": "first", "level": "INFO", "n": float64(1), KeyRequestID: "r-1", KeyTenant: "acme"},
		{"msg": "second", "level": "WARN", "component": "intake", KeyRequestID: "r-1", KeyTenant: "acme", KeyEventKey: "line#acme#e1"},
		{"msg": "no context attributes", "level": "INFO"},
	}
	for i, w := range want {
		for k, v := range w {
			if recs[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v (%v)", i, k, recs[i][k], v, recs[i])
			}
		}
		if _, ok := recs[i]["time"]; !ok {
			t.Errorf("line %d has no time", i)
		}
	}
	if _, ok := recs[0][KeyEventKey]; ok {
		t.Errorf("the parent context got the child's attribute: %v", recs[0])
	}
	if _, ok := recs[2][KeyRequestID]; ok {
		t.Errorf("a record without the context has its attributes: %v", recs[2])
	}
}

func TestWithAttrsLeavesTheParentsSliceAlone(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, slog.LevelInfo)
	base := WithAttrs(context.Background(), slog.String("a", "1"))
	x := WithAttrs(base, slog.String("b", "x"))
	y := WithAttrs(base, slog.String("b", "y"))
	log.InfoContext(x, "x")
	log.InfoContext(y, "y")
	recs := lines(t, &buf)
	if recs[0]["b"] != "x" || recs[1]["b"] != "y" {
		t.Errorf("siblings share attributes: %v", recs)
	}
}

func TestNewLoggerHonoursTheLevel(t *testing.T) {
	tests := []struct {
		level slog.Level
		want  []string
	}{
		{slog.LevelDebug, []string{"DEBUG", "INFO", "WARN", "ERROR"}},
		{slog.LevelInfo, []string{"INFO", "WARN", "ERROR"}},
		{slog.LevelWarn, []string{"WARN", "ERROR"}},
		{slog.LevelError, []string{"ERROR"}},
	}
	for _, tc := range tests {
		t.Run(tc.level.String(), func(t *testing.T) {
			var buf bytes.Buffer
			log := NewLogger(&buf, tc.level)
			ctx := WithAttrs(context.Background(), slog.String(KeyTraceID, "t"))
			log.DebugContext(ctx, "d")
			log.InfoContext(ctx, "i")
			log.WarnContext(ctx, "w")
			log.ErrorContext(ctx, "e")
			var got []string
			for _, rec := range lines(t, &buf) {
				got = append(got, rec["level"].(string))
				if rec[KeyTraceID] != "t" {
					t.Errorf("record without the context's trace id: %v", rec)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got levels %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseLevel(t *testing.T) {
	tests := map[string]slog.Level{
		"debug": slog.LevelDebug, "DEBUG": slog.LevelDebug, " Debug ": slog.LevelDebug,
		"info": slog.LevelInfo, "warn": slog.LevelWarn, "WARNING": slog.LevelWarn, "error": slog.LevelError,
		"": slog.LevelInfo, "verbose": slog.LevelInfo,
	}
	for in, want := range tests {
		if got := ParseLevel(in); got != want {
			t.Errorf("ParseLevel(%q) = %v, want %v", in, got, want)
		}
	}
}
