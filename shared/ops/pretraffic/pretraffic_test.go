package pretraffic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/codedeploy"
	cdtypes "github.com/aws/aws-sdk-go-v2/service/codedeploy/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go"

	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/ops/pretraffic"
	"github.com/hookwall/hookwall/shared/protocol/providers"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

const (
	receiverARN  = "arn:aws:lambda:us-east-1:123456789012:function:hookwall-ReceiverFunction-X:7"
	processorARN = "arn:aws:lambda:us-east-1:123456789012:function:hookwall-ProcessorFunction-X:9"
)

// stack is the real receiver and the real processor on one in-memory
// table, behind a fake Lambda that routes an invocation by version ARN.
type stack struct {
	table *memstore.Store

	mu       sync.Mutex
	sent     []webhook.Envelope // what the receiver enqueued
	dead     int                // dead letters the processor sent
	invoked  []string           // function ARNs, in order
	receiver *intake.Handler
	batch    *sqsbatch.Handler
}

func (s *stack) Send(_ context.Context, envs []webhook.Envelope) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, envs...)
	return nil
}

func (s *stack) ChangeVisibility(context.Context, string, time.Duration) error { return nil }

func (s *stack) SendDeadLetter(context.Context, string, []byte, string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dead++
	return nil
}

func newStack(t *testing.T, doc *tenants.Tenants) *stack {
	t.Helper()
	s := &stack{table: memstore.New(memstore.Config{})}
	parsers, err := intake.BuildParsers(doc, intake.ParserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.receiver, err = intake.New(intake.Config{Parsers: parsers, Store: s.table, Queue: s, Events: s.table,
		DedupWindow: time.Hour, Logger: slog.New(slog.DiscardHandler), Metrics: obs.NewMetrics(io.Discard, "Hookwall", nil)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.New(dispatch.Config{Registry: process.NewRegistry(), Store: s.table, DLQ: s, Kernel: dispatch.Kernel{Queue: s}})
	if err != nil {
		t.Fatal(err)
	}
	s.batch = sqsbatch.New(d, 10)
	return s
}

// Invoke is the fake Lambda: the receiver's and the processor's handlers,
// their answers encoded as the Lambda service returns them.
func (s *stack) Invoke(ctx context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	fn := aws.ToString(in.FunctionName)
	s.mu.Lock()
	s.invoked = append(s.invoked, fn)
	s.mu.Unlock()
	var out any
	switch fn {
	case receiverARN:
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(in.Payload, &ev); err != nil {
			return nil, err
		}
		resp, _ := s.receiver.HandleAPIGateway(ctx, ev)
		out = resp
	case processorARN:
		var ev events.SQSEvent
		if err := json.Unmarshal(in.Payload, &ev); err != nil {
			return nil, err
		}
		resp, _ := s.batch.Handle(ctx, ev)
		out = resp
	default:
		return nil, fmt.Errorf("fake lambda: no function %s", fn)
	}
	b, err := json.Marshal(out)
	return &lambda.InvokeOutput{StatusCode: 200, Payload: b}, err
}

// codeDeploy records the status calls.
type codeDeploy struct {
	calls []codedeploy.PutLifecycleEventHookExecutionStatusInput
	err   error
}

func (c *codeDeploy) PutLifecycleEventHookExecutionStatus(_ context.Context, in *codedeploy.PutLifecycleEventHookExecutionStatusInput,
	_ ...func(*codedeploy.Options)) (*codedeploy.PutLifecycleEventHookExecutionStatusOutput, error) {
	c.calls = append(c.calls, *in)
	return &codedeploy.PutLifecycleEventHookExecutionStatusOutput{}, c.err
}

// lambdaFunc is a fake Lambda made of a function.
type lambdaFunc func(ctx context.Context, in *lambda.InvokeInput) (*lambda.InvokeOutput, error)

func (f lambdaFunc) Invoke(ctx context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	return f(ctx, in)
}

func loadDoc(t *testing.T, path string) *tenants.Tenants {
	t.Helper()
	doc, err := tenants.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

type run struct {
	cd     *codeDeploy
	log    *bytes.Buffer
	sleeps []time.Duration
	err    error
}

// handle runs the hook once with lam and the tenants of doc.
func handle(t *testing.T, lam pretraffic.Invoker, doc *tenants.Tenants, docErr error, statusErr error) *run {
	t.Helper()
	r := &run{cd: &codeDeploy{err: statusErr}, log: &bytes.Buffer{}}
	h, err := pretraffic.New(pretraffic.Config{
		Lambda: lam, CodeDeploy: r.cd,
		LoadTenants:     func(context.Context) (*tenants.Tenants, error) { return doc, docErr },
		ReceiverVersion: receiverARN, ProcessorVersion: processorARN,
		Logger: slog.New(slog.NewJSONHandler(r.log, nil)),
		Sleep:  func(_ context.Context, d time.Duration) error { r.sleeps = append(r.sleeps, d); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r.err = h.Handle(ctx, pretraffic.Event{DeploymentID: "d-ABC123", LifecycleEventHookExecutionID: "exec-1"})
	return r
}

// status returns the one status reported, failing t unless exactly one
// status call was made, for the event's deployment and execution.
func (r *run) status(t *testing.T) cdtypes.LifecycleEventStatus {
	t.Helper()
	if len(r.cd.calls) != 1 {
		t.Fatalf("%d status calls, want 1; log:\n%s", len(r.cd.calls), r.log)
	}
	c := r.cd.calls[0]
	if aws.ToString(c.DeploymentId) != "d-ABC123" || aws.ToString(c.LifecycleEventHookExecutionId) != "exec-1" {
		t.Errorf("status call for %s/%s, want d-ABC123/exec-1", aws.ToString(c.DeploymentId), aws.ToString(c.LifecycleEventHookExecutionId))
	}
	return c.Status
}

// failedChecks returns the names of the checks the log reports failed.
func (r *run) failedChecks() []string {
	var out []string
	for line := range strings.Lines(r.log.String()) {
		var m struct{ Msg, Check string }
		if json.Unmarshal([]byte(line), &m) == nil && m.Msg == "pre-traffic check failed" {
			out = append(out, m.Check)
		}
	}
	return out
}

// The hook against the real receiver and processor code on one table:
// Succeeded, every provider's signed pair checked, both functions invoked,
// and nothing written anywhere.
func TestSucceedsOnTheRealReceiverAndProcessorAndWritesNothing(t *testing.T) {
	doc := loadDoc(t, "testdata/tenants.json")
	s := newStack(t, doc)
	r := handle(t, s, doc, nil, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.status(t); got != cdtypes.LifecycleEventStatusSucceeded {
		t.Fatalf("status %s, want Succeeded; failed checks %v; log:\n%s", got, r.failedChecks(), r.log)
	}
	var passed []string
	for line := range strings.Lines(r.log.String()) {
		var m struct{ Msg, Check string }
		if json.Unmarshal([]byte(line), &m) == nil && m.Msg == "pre-traffic check passed" {
			passed = append(passed, m.Check)
		}
	}
	// Every provider but Standard Webhooks has a request that writes
	// nothing: two checks each, then the events API, the processor and
	// the events API again.
	want := 2*(len(providers.Names())-1) + 3
	if len(passed) != want {
		t.Errorf("%d checks passed, want %d: %q", len(passed), want, passed)
	}
	for _, p := range providers.Names() {
		if p == "standard" {
			continue
		}
		if !slices.Contains(passed, "receiver: "+p+" request signed with tenant acme's secret") {
			t.Errorf("no signed check of %s in %q", p, passed)
		}
	}
	if !slices.Contains(s.invoked, processorARN) || !slices.Contains(s.invoked, receiverARN) {
		t.Errorf("invoked %v, want both versions", s.invoked)
	}
	if recs := s.table.Records(); len(recs) != 0 {
		t.Errorf("the table holds %d records after the hook, want none: %+v", len(recs), recs[0])
	}
	if len(s.sent) != 0 || s.dead != 0 {
		t.Errorf("the receiver enqueued %d events and the processor dead-lettered %d, want none", len(s.sent), s.dead)
	}
}

// A tenant configured with a provider's published demo secret: its request
// signed with the demo secret is accepted, so the refusal check fails.
func TestTenantWithTheDemoSecretFails(t *testing.T) {
	doc := loadDoc(t, "../../../infra/local/tenants.json") // the local stack's made-up secrets are the demo ones
	r := handle(t, newStack(t, doc), doc, nil, nil)
	if got := r.status(t); got != cdtypes.LifecycleEventStatusFailed {
		t.Fatalf("status %s, want Failed", got)
	}
	for _, c := range r.failedChecks() {
		if !strings.HasSuffix(c, "signed with another secret is refused") {
			t.Errorf("failed check %q, want only refusal checks", c)
		}
	}
}

// Only Standard Webhooks tenants: no signed check, the others still run.
func TestNoSignedRequestThatWritesNothing(t *testing.T) {
	doc, err := tenants.Parse([]byte(`{"tenants": {"beta": {"standard": {"secrets": ["whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	s := newStack(t, doc)
	r := handle(t, s, doc, nil, nil)
	if got := r.status(t); got != cdtypes.LifecycleEventStatusSucceeded {
		t.Fatalf("status %s, want Succeeded; log:\n%s", got, r.log)
	}
	if !strings.Contains(r.log.String(), "the signed checks are skipped") {
		t.Errorf("the skip is not logged:\n%s", r.log)
	}
	if n := len(s.invoked); n != 3 {
		t.Errorf("%d invocations, want 3 (events API, processor, events API)", n)
	}
}

// around wraps the real stack's Lambda: change may replace an answer.
func around(s *stack, change func(fn string, in *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error)) lambdaFunc {
	return func(ctx context.Context, in *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
		out, err := s.Invoke(ctx, in)
		return change(aws.ToString(in.FunctionName), in, out, err)
	}
}

func apiAnswer(status int, body string) *lambda.InvokeOutput {
	b, _ := json.Marshal(events.APIGatewayV2HTTPResponse{StatusCode: status, Body: body})
	return &lambda.InvokeOutput{StatusCode: 200, Payload: b}
}

// Each broken answer fails the deployment, and the status is reported
// every time.
func TestFailsOnABadAnswer(t *testing.T) {
	doc := loadDoc(t, "testdata/tenants.json")
	cases := []struct {
		name   string
		change func(fn string, in *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error)
		failed string // a check that must be among the failed ones
	}{
		{"receiver answers 500", func(fn string, _ *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error) {
			if fn == receiverARN {
				return apiAnswer(500, "Internal Server Error\n"), nil
			}
			return out, err
		}, "receiver: line request signed with tenant acme's secret"},
		{"receiver answers 401 to a good signature", func(fn string, in *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error) {
			if fn == receiverARN && bytes.Contains(in.Payload, []byte(`"/webhooks/wecom/acme"`)) {
				return apiAnswer(401, "Unauthorized\n"), nil
			}
			return out, err
		}, "receiver: wecom request signed with tenant acme's secret"},
		{"receiver accepts a bad signature", func(fn string, in *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error) {
			if fn == receiverARN && bytes.Contains(in.Payload, []byte(`"/webhooks/slack/acme"`)) {
				return apiAnswer(200, ""), nil
			}
			return out, err
		}, "receiver: slack request signed with another secret is refused"},
		{"events API cannot read the table", func(fn string, in *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error) {
			if fn == receiverARN && bytes.Contains(in.Payload, []byte(`"GET /events/`)) {
				return apiAnswer(503, `{"error":"the events table could not be read; retry"}`), nil
			}
			return out, err
		}, "receiver: events API of an absent key answers 404"},
		{"receiver crashes", func(fn string, _ *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error) {
			if fn == receiverARN {
				return &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"),
					Payload: []byte(`{"errorMessage":"Runtime.ExitError"}`)}, nil
			}
			return out, err
		}, "receiver: events API of an absent key answers 404"},
		{"processor function error", func(fn string, _ *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error) {
			if fn == processorARN {
				return &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"),
					Payload: []byte(`{"errorMessage":"Task timed out after 60.00 seconds"}`)}, nil
			}
			return out, err
		}, "processor: a message of an absent record is acknowledged"},
		{"processor keeps the message", func(fn string, _ *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error) {
			if fn == processorARN {
				return &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`{"batchItemFailures":[{"itemIdentifier":"x"}]}`)}, nil
			}
			return out, err
		}, "processor: a message of an absent record is acknowledged"},
		{"invoke refused", func(fn string, _ *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error) {
			if fn == processorARN {
				return nil, &smithy.GenericAPIError{Code: "ResourceNotFoundException", Message: "version 9 not found"}
			}
			return out, err
		}, "processor: a message of an absent record is acknowledged"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := handle(t, around(newStack(t, doc), c.change), doc, nil, nil)
			if r.err != nil {
				t.Fatalf("Handle: %v (a failed check is a Failed status, not an error)", r.err)
			}
			if got := r.status(t); got != cdtypes.LifecycleEventStatusFailed {
				t.Fatalf("status %s, want Failed", got)
			}
			if !slices.Contains(r.failedChecks(), c.failed) {
				t.Errorf("failed checks %q lack %q", r.failedChecks(), c.failed)
			}
		})
	}
}

// A processor version that writes the record it is sent (a change that
// would leave the hook's junk in the table) fails the last check.
func TestFailsWhenTheProcessorWrites(t *testing.T) {
	doc := loadDoc(t, "testdata/tenants.json")
	s := newStack(t, doc)
	lam := around(s, func(fn string, in *lambda.InvokeInput, out *lambda.InvokeOutput, err error) (*lambda.InvokeOutput, error) {
		if fn == processorARN {
			var ev events.SQSEvent
			_ = json.Unmarshal(in.Payload, &ev)
			var env webhook.Envelope
			_ = json.Unmarshal([]byte(ev.Records[0].Body), &env)
			s.table.Put(&store.Record{Key: env.Key, SK: store.SKEvent, Status: webhook.StatusSucceeded, Version: 1,
				Provider: env.Provider, Tenant: env.Tenant, EventType: env.Type, ExpiresAt: time.Now().Add(time.Hour).Unix()})
		}
		return out, err
	})
	r := handle(t, lam, doc, nil, nil)
	if got := r.status(t); got != cdtypes.LifecycleEventStatusFailed {
		t.Fatalf("status %s, want Failed", got)
	}
	if f := r.failedChecks(); !slices.Equal(f, []string{"receiver: the key is still absent (the processor wrote nothing)"}) {
		t.Errorf("failed checks %q", f)
	}
}

// IAM is eventually consistent: a version the role was just allowed to
// invoke may be denied for a few seconds; the hook tries again.
func TestAccessDeniedIsTriedAgain(t *testing.T) {
	doc := loadDoc(t, "testdata/tenants.json")
	s := newStack(t, doc)
	denied := 2
	lam := lambdaFunc(func(ctx context.Context, in *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
		if denied > 0 {
			denied--
			return nil, &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform: lambda:InvokeFunction"}
		}
		return s.Invoke(ctx, in)
	})
	r := handle(t, lam, doc, nil, nil)
	if got := r.status(t); got != cdtypes.LifecycleEventStatusSucceeded {
		t.Fatalf("status %s, want Succeeded; log:\n%s", got, r.log)
	}
	if !slices.Equal(r.sleeps, []time.Duration{2 * time.Second, 4 * time.Second}) {
		t.Errorf("waits %v, want [2s 4s]", r.sleeps)
	}
	// Denied for good: Failed after four waits.
	r = handle(t, lambdaFunc(func(context.Context, *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
		return nil, &smithy.GenericAPIError{Code: "AccessDeniedException"}
	}), doc, nil, nil)
	if got := r.status(t); got != cdtypes.LifecycleEventStatusFailed {
		t.Fatalf("status %s, want Failed", got)
	}
}

// The tenants document cannot be read: Failed, reported, nothing invoked.
func TestTenantsErrorIsReported(t *testing.T) {
	var invoked int
	lam := lambdaFunc(func(context.Context, *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
		invoked++
		return nil, errors.New("unexpected")
	})
	r := handle(t, lam, nil, errors.New("tenants: read tenants secret: AccessDenied"), nil)
	if got := r.status(t); got != cdtypes.LifecycleEventStatusFailed {
		t.Fatalf("status %s, want Failed", got)
	}
	if invoked != 0 {
		t.Errorf("%d invocations, want none", invoked)
	}
}

// A status that cannot be reported is the one error Handle returns (the
// Lambda service then runs it again); an event that is not a hook's is
// refused before any check.
func TestHandleErrors(t *testing.T) {
	doc := loadDoc(t, "testdata/tenants.json")
	r := handle(t, newStack(t, doc), doc, nil, errors.New("LifecycleEventAlreadyCompletedException"))
	if r.err == nil || !strings.Contains(r.err.Error(), "report Succeeded") {
		t.Errorf("Handle: %v, want the report's error", r.err)
	}
	cd := &codeDeploy{}
	h, err := pretraffic.New(pretraffic.Config{Lambda: newStack(t, doc), CodeDeploy: cd,
		LoadTenants:     func(context.Context) (*tenants.Tenants, error) { return doc, nil },
		ReceiverVersion: receiverARN, ProcessorVersion: processorARN, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(context.Background(), pretraffic.Event{DeploymentID: "d-1"}); err == nil || len(cd.calls) != 0 {
		t.Errorf("an event without an execution id: %v, %d status calls; want an error and none", err, len(cd.calls))
	}
	if _, err := pretraffic.New(pretraffic.Config{}); err == nil {
		t.Error("New with nothing: no error")
	}
}

// The checks keep time for the status call: with the invocation's deadline
// near, a receiver that hangs is cut off and Failed is still reported.
func TestStatusIsReportedWhenTheChecksRunOutOfTime(t *testing.T) {
	doc := loadDoc(t, "testdata/tenants.json")
	cd := &codeDeploy{}
	lam := lambdaFunc(func(ctx context.Context, _ *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	h, err := pretraffic.New(pretraffic.Config{Lambda: lam, CodeDeploy: cd,
		LoadTenants:     func(context.Context) (*tenants.Tenants, error) { return doc, nil },
		ReceiverVersion: receiverARN, ProcessorVersion: processorARN, Logger: slog.New(slog.DiscardHandler),
		StatusReserve: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	if err := h.Handle(ctx, pretraffic.Event{DeploymentID: "d-1", LifecycleEventHookExecutionID: "e-1"}); err != nil {
		t.Fatal(err)
	}
	if len(cd.calls) != 1 || cd.calls[0].Status != cdtypes.LifecycleEventStatusFailed {
		t.Errorf("status calls %+v, want one Failed", cd.calls)
	}
}

// The names this package repeats are the receiver's and the queue's.
func TestRoutesAreTheReceiversOwn(t *testing.T) {
	src, err := os.ReadFile("checks.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte(`eventsRoute  = "`+intake.EventsRoute+`"`)) {
		t.Errorf("checks.go's eventsRoute is not intake.EventsRoute %q", intake.EventsRoute)
	}
}
