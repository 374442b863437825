package pretraffic

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/codedeploy"
	cdtypes "github.com/aws/aws-sdk-go-v2/service/codedeploy/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go"

	"github.com/hookwall/hookwall/shared/base/batch"
	"github.com/hookwall/hookwall/shared/config/tenants"
)

// Event is what CodeDeploy passes to a lifecycle hook function.
type Event struct {
	DeploymentID                  string `json:"DeploymentId"`
	LifecycleEventHookExecutionID string `json:"LifecycleEventHookExecutionId"`
}

// Invoker invokes a Lambda function version: *lambda.Client.
type Invoker interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Reporter reports a lifecycle hook's status to CodeDeploy: *codedeploy.Client.
type Reporter interface {
	PutLifecycleEventHookExecutionStatus(ctx context.Context, in *codedeploy.PutLifecycleEventHookExecutionStatusInput,
		optFns ...func(*codedeploy.Options)) (*codedeploy.PutLifecycleEventHookExecutionStatusOutput, error)
}

// DefaultStatusReserve is the time kept back from the checks for the status
// call when [Config].StatusReserve is zero.
const DefaultStatusReserve = 5 * time.Second

// accessDeniedWaits are the waits before each new invocation of a version
// that answered AccessDeniedException: the hook's role names the versions
// it may invoke, so each stack update changes the policy moments before
// the hook runs, and IAM is eventually consistent
// (aws/serverless-application-model#838). 30 s in all.
var accessDeniedWaits = []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}

// Config is what a [Handler] needs.
type Config struct {
	// Lambda invokes the versions (required).
	Lambda Invoker
	// CodeDeploy receives the status (required).
	CodeDeploy Reporter
	// LoadTenants returns the stack's tenants document (required). It is
	// called on every run, so that a document that cannot be read fails
	// the deployment (reported) rather than the hook's cold start (never
	// reported).
	LoadTenants func(ctx context.Context) (*tenants.Tenants, error)
	// ReceiverVersion and ProcessorVersion are the ARNs of the versions to
	// check (required).
	ReceiverVersion, ProcessorVersion string
	// Logger receives one line per check and the status (required).
	Logger *slog.Logger
	// StatusReserve is kept back from the invocation's deadline for the
	// status call (0: DefaultStatusReserve).
	StatusReserve time.Duration
	// Now is the clock (nil: time.Now); Random the source of ids, nonces
	// and echoes (nil: crypto/rand); Sleep waits before an invocation is
	// tried again (nil: a timer that ctx cancels).
	Now    func() time.Time
	Random io.Reader
	Sleep  func(ctx context.Context, d time.Duration) error
}

// Handler is the pre-traffic hook.
type Handler struct {
	cfg Config
}

// New returns the hook, or an error naming what cfg lacks.
func New(cfg Config) (*Handler, error) {
	var missing []error
	if cfg.Lambda == nil {
		missing = append(missing, errors.New("no Lambda client"))
	}
	if cfg.CodeDeploy == nil {
		missing = append(missing, errors.New("no CodeDeploy client"))
	}
	if cfg.LoadTenants == nil {
		missing = append(missing, errors.New("no tenants loader"))
	}
	if cfg.ReceiverVersion == "" || cfg.ProcessorVersion == "" {
		missing = append(missing, errors.New("no receiver or processor version"))
	}
	if cfg.Logger == nil {
		missing = append(missing, errors.New("no logger"))
	}
	if err := errors.Join(missing...); err != nil {
		return nil, fmt.Errorf("pretraffic: %w", err)
	}
	if cfg.StatusReserve <= 0 {
		cfg.StatusReserve = DefaultStatusReserve
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	if cfg.Sleep == nil {
		cfg.Sleep = batch.Sleep
	}
	return &Handler{cfg: cfg}, nil
}

// Result is the outcome of one check: Err nil when it passed.
type Result struct {
	Name string
	Err  error
}

// Handle runs the checks and reports Succeeded when all passed, Failed
// otherwise. It returns an error only when it could not report (or the
// event is not a lifecycle hook's), so that the Lambda service runs it
// again; a failed check is a Failed status, not an error.
func (h *Handler) Handle(ctx context.Context, ev Event) error {
	if ev.DeploymentID == "" || ev.LifecycleEventHookExecutionID == "" {
		return errors.New("pretraffic: the event has no DeploymentId or LifecycleEventHookExecutionId: not a CodeDeploy lifecycle hook's")
	}
	log := h.cfg.Logger.With(slog.String("deployment_id", ev.DeploymentID))
	cctx, cancel := h.checkContext(ctx)
	results := h.Check(cctx)
	cancel()
	status := cdtypes.LifecycleEventStatusSucceeded
	for _, r := range results {
		if r.Err != nil {
			status = cdtypes.LifecycleEventStatusFailed
			log.ErrorContext(ctx, "pre-traffic check failed", slog.String("check", r.Name), slog.Any("error", r.Err))
		} else {
			log.InfoContext(ctx, "pre-traffic check passed", slog.String("check", r.Name))
		}
	}
	_, err := h.cfg.CodeDeploy.PutLifecycleEventHookExecutionStatus(ctx, &codedeploy.PutLifecycleEventHookExecutionStatusInput{
		DeploymentId:                  aws.String(ev.DeploymentID),
		LifecycleEventHookExecutionId: aws.String(ev.LifecycleEventHookExecutionID),
		Status:                        status,
	})
	if err != nil {
		log.ErrorContext(ctx, "pre-traffic status not reported", slog.String("status", string(status)), slog.Any("error", err))
		return fmt.Errorf("pretraffic: report %s: %w", status, err)
	}
	log.InfoContext(ctx, "pre-traffic status reported", slog.String("status", string(status)), slog.Int("checks", len(results)))
	return nil
}

// checkContext is ctx with StatusReserve taken from its deadline.
func (h *Handler) checkContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, d.Add(-h.cfg.StatusReserve))
	}
	return context.WithCancel(ctx)
}

// invoke invokes the function version fn with payload and decodes its
// answer into out. A function error (a crash, a timeout, a failed start)
// is an error, with the start of the error document.
func (h *Handler) invoke(ctx context.Context, fn string, payload, out any) error {
	in, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("encode the event: %w", err)
	}
	for attempt := 0; ; attempt++ {
		o, err := h.cfg.Lambda.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(fn), Payload: in})
		if err != nil {
			var ae smithy.APIError
			if errors.As(err, &ae) && ae.ErrorCode() == "AccessDeniedException" && attempt < len(accessDeniedWaits) {
				h.cfg.Logger.WarnContext(ctx, "invoke denied; trying again (IAM propagation)", slog.String("function", fn),
					slog.Duration("wait", accessDeniedWaits[attempt]))
				if err := h.cfg.Sleep(ctx, accessDeniedWaits[attempt]); err != nil {
					return fmt.Errorf("invoke %s: %w", fn, err)
				}
				continue
			}
			return fmt.Errorf("invoke %s: %w", fn, err)
		}
		if o.FunctionError != nil {
			return fmt.Errorf("invoke %s: function error %s: %s", fn, aws.ToString(o.FunctionError), clip(o.Payload, 300))
		}
		if err := json.Unmarshal(o.Payload, out); err != nil {
			return fmt.Errorf("invoke %s: answer %s: %w", fn, clip(o.Payload, 100), err)
		}
		return nil
	}
}

// clip returns b as a string of at most n bytes.
func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
