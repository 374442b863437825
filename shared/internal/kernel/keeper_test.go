package kernel

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := Until(context.Background(), now, time.Minute); !got.Equal(now.Add(time.Minute)) {
		t.Errorf("got %v, want now + 1m", got)
	}
	dl := now.Add(time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), dl)
	defer cancel()
	if got := Until(ctx, now, time.Minute); !got.Equal(dl) {
		t.Errorf("got %v, want the deadline %v", got, dl)
	}
}

func TestKeeperLost(t *testing.T) {
	errLost := errors.New("lost")
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var k Keeper
	beats := 0
	hctx, stop := k.Start(context.Background(), 3*time.Millisecond, time.Second, errLost, log,
		func(context.Context) (bool, error) {
			beats++
			if beats == 1 {
				return false, errors.New("throttled")
			}
			return false, nil
		})
	defer stop()
	<-hctx.Done()
	if !k.Lost() || context.Cause(hctx) != errLost {
		t.Errorf("got lost %v, cause %v; want true, %v", k.Lost(), context.Cause(hctx), errLost)
	}
	if !strings.Contains(logs.String(), "throttled") {
		t.Errorf("got logs %q, want the heartbeat error", logs.String())
	}
}

func TestKeeperStopEndsContext(t *testing.T) {
	var k Keeper
	hctx, stop := k.Start(context.Background(), time.Hour, time.Second, errors.New("lost"),
		slog.New(slog.NewTextHandler(io.Discard, nil)), func(context.Context) (bool, error) { return true, nil })
	stop()
	if hctx.Err() == nil || k.Lost() {
		t.Errorf("got err %v, lost %v; want cancelled, not lost", hctx.Err(), k.Lost())
	}
	k.MarkLost() // after stop: no panic
}
