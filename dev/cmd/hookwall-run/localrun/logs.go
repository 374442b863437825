package localrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// Log attributes of the runner's path lines.
const (
	// AttrStage names the step of an event's path a line reports.
	AttrStage = "stage"
	// AttrDetail is the line's human sentence.
	AttrDetail = "detail"
)

// Stages of an event's path, in their usual order.
const (
	StageReceived      = "received"      // a request reached the receiver
	StageClaimed       = "claimed"       // the receiver claimed a new event
	StageEnqueued      = "enqueued"      // SQS accepted its message
	StageAnswered      = "answered"      // the receiver answered the platform
	StageDuplicate     = "duplicate"     // a duplicate was acknowledged
	StageConflict      = "conflict"      // same key, another payload
	StageRejected      = "rejected"      // 4xx or 5xx answer
	StageProcessing    = "processing"    // the processor received its message
	StageForwarded     = "forwarded"     // the forward target got it
	StageSucceeded     = "succeeded"     // the record is SUCCEEDED
	StageRetry         = "retry"         // it comes back after a backoff
	StageFailed        = "failed"        // FAILED
	StageDeadLettered  = "dead-lettered" // sent to the dead-letter queue
	StageCompensating  = "compensating"  // the compensator received it
	StageCompensated   = "compensated"   // COMPENSATED
	StageDead          = "dead"          // DEAD
	StageSwept         = "swept"         // the sweeper re-enqueued or dead-lettered it
	StageOutcome       = "outcome"       // an outcome event reached the local EventBridge
	StageReplayed      = "replayed"      // replayed from the page
	stageColumnWidth   = 13
	humanTimeLayout    = "15:04:05.000"
	maxHumanValueBytes = 300
)

// messageStages gives the stage of the functions' own log messages, so that
// a terminal shows them as steps of the path; quiet says the message adds
// nothing to the stage's name.
var messageStages = map[string]struct {
	stage string
	quiet bool
}{
	"event claimed":                                    {StageClaimed, true},
	"duplicate delivery acknowledged":                  {StageDuplicate, false},
	"same key, different payload: not processed again": {StageConflict, false},
	"duplicate delivery":                               {StageDuplicate, false},
	"event succeeded":                                  {StageSucceeded, true},
	"event will be retried":                            {StageRetry, false},
	"event failed":                                     {StageFailed, false},
	"delivery rejected":                                {StageRejected, false},
	"delivery failed; the platform will retry":         {StageRejected, false},
	"event compensated":                                {StageCompensated, true},
	"event dead":                                       {StageDead, false},
	"compensation will be retried":                     {StageRetry, false},
	"stuck record re-enqueued from its stored payload": {StageSwept, false},
	"stuck record sent to the dead-letter queue again": {StageSwept, false},
}

// LogTap is the writer of the runner's JSON logger (shared/base/obs). In JSON
// mode it passes each line through; in human mode it rewrites each line as
// one short, aligned line: time, stage (or level), event key and what
// happened. It is safe for concurrent use.
type LogTap struct {
	out   io.Writer
	human bool
	color bool
	mu    sync.Mutex
}

// NewLogTap returns a tap writing to out, human-readable if human, with ANSI
// colours if color.
func NewLogTap(out io.Writer, human, color bool) *LogTap {
	return &LogTap{out: out, human: human, color: color}
}

// Write takes one or more JSON lines. A sweep that did nothing is not
// written (in either mode): the sweeper runs every 30 s.
func (t *LogTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for line := range bytes.SplitSeq(bytes.TrimRight(p, "\n"), []byte("\n")) {
		if IdleSweep(line) {
			continue
		}
		out := append(append(make([]byte, 0, len(line)+1), line...), '\n')
		if t.human {
			out = []byte(t.Human(line) + "\n")
		}
		if _, err := t.out.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// sweepMessage is the sweeper's message after each run (shared/engine/sweep).
const sweepMessage = "sweep done"

// sweepActions are the counts of a sweep line that say it did something.
var sweepActions = []string{"requeued", "dead_lettered", "resweeped", "moved_on", "errors", "query_errors", "interrupted"}

// IdleSweep reports whether line is the sweeper's line after a run that
// did nothing (every action count zero, no warning).
func IdleSweep(line []byte) bool {
	if !bytes.Contains(line, []byte(`"msg":"`+sweepMessage+`"`)) {
		return false
	}
	var m map[string]any
	if json.Unmarshal(line, &m) != nil || m["msg"] != sweepMessage || m["level"] != "INFO" {
		return false
	}
	for _, k := range sweepActions {
		if n, _ := m[k].(float64); n != 0 {
			return false
		}
	}
	return true
}

// durationKeys are attributes the functions log with slog.Duration (JSON:
// nanoseconds): a human line shows them as durations ("1.476s").
var durationKeys = map[string]bool{"elapsed": true, "took": true, "retry_after": true, "stuck_for": true}

// humanDuration formats nanoseconds for a human line, to the millisecond
// (to the microsecond under one millisecond).
func humanDuration(ns float64) string {
	d := time.Duration(ns)
	if d >= time.Millisecond || d <= -time.Millisecond {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// hiddenKeys are attributes a human line leaves out: shown otherwise, or
// noise on one machine.
var hiddenKeys = map[string]bool{
	"time": true, "level": true, "msg": true, AttrStage: true, AttrDetail: true,
	"event_key": true, "trace_id": true, "request_id": true, "provider": true, "tenant": true,
}

// Human formats one JSON log line for a terminal; a line that is not JSON
// is returned as it is.
func (t *LogTap) Human(line []byte) string {
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		return string(line)
	}
	str := func(k string) string {
		s, _ := m[k].(string)
		return s
	}
	ts := str("time")
	if at, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		ts = at.Local().Format(humanTimeLayout)
	}
	msg, level := str("msg"), str("level")
	stage, quiet := str(AttrStage), false
	if stage == "" {
		ms := messageStages[msg]
		stage, quiet = ms.stage, ms.quiet
	}
	var b strings.Builder
	b.WriteString(ts)
	b.WriteString("  ")
	label := stage
	if label == "" {
		label = strings.ToLower(level)
	}
	b.WriteString(t.paint(stage, level, fmt.Sprintf("%-*s", stageColumnWidth, label)))
	if k := str("event_key"); k != "" {
		b.WriteString(" ")
		b.WriteString(k)
	} else if p, tn := str("provider"), str("tenant"); p != "" && tn != "" {
		b.WriteString(" ")
		b.WriteString(p + "/" + tn)
	}
	if d := str(AttrDetail); d != "" {
		b.WriteString("  ")
		b.WriteString(d)
	} else if str(AttrStage) == "" && !quiet {
		b.WriteString("  ")
		b.WriteString(msg)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		switch {
		case hiddenKeys[k]:
		case str(AttrDetail) != "" && k != "error":
		case stage != "" && k == "function", stage == StageSucceeded && (k == "status" || k == "event_type"):
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		b.WriteString(" ")
	}
	for _, k := range keys {
		v := m[k]
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case float64:
			if durationKeys[k] {
				s = humanDuration(v)
				break
			}
			j, _ := json.Marshal(v)
			s = string(j)
		default:
			j, _ := json.Marshal(v)
			s = string(j)
		}
		if len(s) > maxHumanValueBytes {
			s = s[:maxHumanValueBytes] + "…"
		}
		if strings.ContainsAny(s, " \t\"") {
			s = fmt.Sprintf("%q", s)
		}
		b.WriteString(" ")
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(s)
	}
	return b.String()
}

func (t *LogTap) paint(stage, level, s string) string {
	if !t.color {
		return s
	}
	code := "36" // cyan: a step
	switch {
	case stage == StageSucceeded || stage == StageForwarded || stage == StageOutcome || stage == StageCompensated:
		code = "32" // green
	case stage == StageFailed || stage == StageRejected || stage == StageDeadLettered || stage == StageDead || level == "ERROR":
		code = "31" // red
	case stage == StageRetry || stage == StageDuplicate || stage == StageConflict || stage == StageSwept || level == "WARN":
		code = "33" // yellow
	case stage == "":
		code = "2" // dim: other lines
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}
