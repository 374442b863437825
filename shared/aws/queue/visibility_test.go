package queue

import (
	"testing"
	"time"
)

func TestVisibilitySeconds(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int32
	}{{-time.Second, 0}, {0, 0}, {time.Millisecond, 1}, {time.Second, 1}, {1500 * time.Millisecond, 2},
		{12 * time.Hour, 43200}, {100 * time.Hour, 43200}} {
		if got := VisibilitySeconds(tt.d); got != tt.want {
			t.Errorf("VisibilitySeconds(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}
