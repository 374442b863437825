package samlocal

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

var repoRoot = filepath.Join("..", "..", "..", "..")

// The local event sources follow template.yaml: if the template changes
// its batch size, window, timeouts or schedule, so does make sam-local.
func TestReadTemplate(t *testing.T) {
	tpl, err := ReadTemplate(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for fn, want := range map[string]EventSource{
		Processor:   {Queue: "EventsQueue", BatchSize: 10, Window: time.Second, Partial: true},
		Compensator: {Queue: "EventsDeadLetterQueue", BatchSize: 10, Window: time.Second, Partial: true},
	} {
		if got := tpl.SQS[fn]; got != want {
			t.Errorf("%s: %+v, want %+v", fn, got, want)
		}
	}
	for fn, want := range map[string]time.Duration{Receiver: 4 * time.Second, Processor: time.Minute, Compensator: time.Minute} {
		if tpl.Timeout[fn] != want {
			t.Errorf("%s timeout %s, want %s", fn, tpl.Timeout[fn], want)
		}
	}
	if tpl.Sweep != 5*time.Minute || tpl.MaxReceiveCount != 10 {
		t.Errorf("sweep %s, max receive count %d", tpl.Sweep, tpl.MaxReceiveCount)
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]time.Duration{"rate(5 minutes)": 5 * time.Minute, "rate(1 minute)": time.Minute,
		"rate(2 hours)": 2 * time.Hour, "rate(1 day)": 24 * time.Hour} {
		if got, err := parseRate(in); err != nil || got != want {
			t.Errorf("%s: %s, %v", in, got, err)
		}
	}
	for _, in := range []string{"cron(0 * * * ? *)", "rate(5 seconds)", "rate(x minutes)", ""} {
		if _, err := parseRate(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// Every sample of events/ is found, the receiver's first.
func TestSamples(t *testing.T) {
	samples, err := Samples(filepath.Join(repoRoot, "events"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	last := -1
	for _, s := range samples {
		i := map[string]int{Receiver: 0, Processor: 1, Compensator: 2}[s.Function]
		if i < last {
			t.Errorf("%s comes after a later function's sample", s.Path)
		}
		last = i
		seen[s.Function]++
	}
	for _, fn := range Functions {
		if seen[fn] == 0 {
			t.Errorf("no sample for %s", fn)
		}
	}
	all, _ := filepath.Glob(filepath.Join(repoRoot, "events", "*", "*.json"))
	bodies, _ := filepath.Glob(filepath.Join(repoRoot, "events", "bodies", "*.json"))
	if len(samples) != len(all)-len(bodies) {
		t.Errorf("%d samples, %d files in events/*/ (%d of them bodies)", len(samples), len(all), len(bodies))
	}
}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		fn, answer string
		ok         bool
	}{
		{Receiver, `{"statusCode": 200, "body": ""}`, true},
		{Receiver, `{"statusCode": 401, "body": "bad signature"}`, false},
		{Receiver, `{"errorType": "x", "errorMessage": "boom"}`, false},
		{Processor, `{"batchItemFailures": []}`, true},
		{Processor, `{"batchItemFailures": [{"itemIdentifier": "m1"}]}`, false},
		{Compensator, `null`, true},
		{Compensator, `{"requeued": 0}`, true},
		{Compensator, `Traceback`, false},
	} {
		if err := judge(tc.fn, tc.answer); (err == nil) != tc.ok {
			t.Errorf("%s %s: %v", tc.fn, tc.answer, err)
		}
	}
}

type fakeLambda struct {
	calls []string
	out   *lambda.InvokeOutput
	err   error
}

func (f *fakeLambda) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.calls = append(f.calls, aws.ToString(in.FunctionName)+" "+string(in.Payload))
	return f.out, f.err
}

func TestInvokerColdThenWarm(t *testing.T) {
	f := &fakeLambda{out: &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`{"batchItemFailures":[{"itemIdentifier":"m2"}]}`)}}
	var timings []Timing
	iv := &Invoker{Client: f, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), OnTiming: func(t Timing) { timings = append(timings, t) }}
	h := iv.BatchHandler(Processor)
	ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1"}, {MessageId: "m2"}}}
	for range 2 {
		resp, err := h(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m2" {
			t.Fatalf("answer %+v", resp)
		}
	}
	if len(timings) != 2 || !timings[0].Cold || timings[1].Cold {
		t.Errorf("timings %+v: want the first cold, the second warm", timings)
	}
	if !strings.HasPrefix(f.calls[0], Processor+` {"Records":[{"messageId":"m1"`) {
		t.Errorf("payload %s", f.calls[0])
	}
}

func TestInvokerFailures(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &fakeLambda{out: &lambda.InvokeOutput{FunctionError: aws.String("Unhandled"), Payload: []byte(`{"errorMessage":"boom"}`)}}
	if _, err := (&Invoker{Client: f, Log: log}).Invoke(context.Background(), Processor, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("function error: %v", err)
	}
	f = &fakeLambda{err: errors.New("connection refused")}
	iv := &Invoker{Client: f, Log: log}
	var timings []Timing
	iv.OnTiming = func(t Timing) { timings = append(timings, t) }
	for range 2 {
		if _, err := iv.Invoke(context.Background(), Compensator, []byte(`{}`)); err == nil {
			t.Error("a failed call passed")
		}
	}
	if !timings[1].Cold {
		t.Error("a call after one no container answered counts as warm")
	}
	f = &fakeLambda{out: &lambda.InvokeOutput{Payload: []byte(`"not a batch response"`)}}
	if _, err := (&Invoker{Client: f, Log: log}).BatchHandler(Processor)(context.Background(), events.SQSEvent{}); err == nil {
		t.Error("an answer that is not a partial batch response passed")
	}
}

func TestLoadConfig(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c, err := LoadConfig(getenv, repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if c.APIPort != 3001 || c.LambdaPort != 3002 || c.Arch != HostArch() || !c.Engine ||
		c.Run.RunDir != filepath.Join(c.Run.Root, ".local", "sam-run") || c.SAM != filepath.Join(c.Run.Root, ".local", "sam-venv", "bin", "sam") {
		t.Errorf("defaults %+v", c)
	}
	for k, v := range map[string]string{"SAM_API_PORT": "x", "SAM_LAMBDA_PORT": "70000", "SAM_LOCAL_ARCH": "riscv64",
		"HOOKWALL_SAM_SWEEP_EVERY": "10ms", "HOOKWALL_SAM_ENGINE": "maybe"} {
		env = map[string]string{k: v}
		if _, err := LoadConfig(getenv, repoRoot); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
	env = map[string]string{"SAM_API_PORT": "4000", "SAM_LAMBDA_PORT": "4000"}
	if _, err := LoadConfig(getenv, repoRoot); err == nil {
		t.Error("the same port twice accepted")
	}
}

func TestShimSocketIsShortAndPerRunDir(t *testing.T) {
	a, b := ShimSocket("/work/a/.local/sam-run"), ShimSocket("/work/b/.local/sam-run")
	if a == b || len(a) > 100 || a != ShimSocket("/work/a/.local/sam-run") {
		t.Errorf("%s %s", a, b)
	}
}
