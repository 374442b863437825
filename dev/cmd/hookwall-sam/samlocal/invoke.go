package samlocal

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
)

// LambdaAPI is the part of the Lambda client an [Invoker] uses; *lambda.Client satisfies it.
type LambdaAPI interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// NewLambdaClient returns a Lambda client for `sam local start-lambda` at
// endpoint (http://127.0.0.1:3002), with the made-up credentials it accepts
// and no retries: a failed invocation is the event source's to retry.
func NewLambdaClient(endpoint, region string) *lambda.Client {
	return lambda.New(lambda.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      aws.NopRetryer{},
	})
}

// Timing is one invocation through the local Lambda endpoint: how long
// Invoke took, seen from the caller, and whether it was the function's
// first (cold: SAM creates and starts its container) or a later one
// (warm: the container is reused, --warm-containers).
type Timing struct {
	Function string
	Took     time.Duration
	Cold     bool
}

// Invoker invokes the template's functions through `sam local
// start-lambda` with lambda.Invoke, as the Lambda service invokes them for
// their event sources, and logs each invocation's time.
type Invoker struct {
	// Client is the Lambda client of the local endpoint (required).
	Client LambdaAPI
	// Log receives one "invoke" line per invocation (required).
	Log *slog.Logger
	// OnTiming, if set, receives each invocation's [Timing].
	OnTiming func(Timing)

	mu   sync.Mutex
	seen map[string]bool
}

// Invoke calls function with payload and returns its answer. A function
// error (the handler failed, panicked or timed out) is an error carrying
// the function's error payload.
func (iv *Invoker) Invoke(ctx context.Context, function string, payload []byte) ([]byte, error) {
	iv.mu.Lock()
	if iv.seen == nil {
		iv.seen = map[string]bool{}
	}
	cold := !iv.seen[function]
	iv.seen[function] = true
	iv.mu.Unlock()
	start := time.Now()
	out, err := iv.Client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(function), Payload: payload})
	took := time.Since(start)
	t := Timing{Function: function, Took: took, Cold: cold}
	iv.Log.InfoContext(ctx, "invoke", slog.String("function", function), slog.Float64("ms", float64(took.Microseconds())/1000),
		slog.Bool("cold", cold), slog.Bool("ok", err == nil && (out == nil || out.FunctionError == nil)))
	if iv.OnTiming != nil {
		iv.OnTiming(t)
	}
	if err != nil {
		iv.mu.Lock()
		iv.seen[function] = false // no container answered: the next call starts one
		iv.mu.Unlock()
		return nil, fmt.Errorf("invoke %s through sam local start-lambda: %w", function, err)
	}
	if out.FunctionError != nil {
		return nil, fmt.Errorf("%s failed (%s): %s", function, aws.ToString(out.FunctionError), strings.TrimSpace(string(out.Payload)))
	}
	return out.Payload, nil
}

// BatchHandler returns function as a [localrun.BatchHandler]: the SQS
// event goes to the container as the Lambda service sends it, and the
// answer is read as the event source reads a partial batch response.
func (iv *Invoker) BatchHandler(function string) localrun.BatchHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		raw, err := json.Marshal(ev)
		if err != nil {
			return events.SQSEventResponse{}, fmt.Errorf("encode the SQS event: %w", err)
		}
		out, err := iv.Invoke(ctx, function, raw)
		if err != nil {
			return events.SQSEventResponse{}, err
		}
		var resp events.SQSEventResponse
		if len(out) > 0 && string(out) != "null" {
			if err := json.Unmarshal(out, &resp); err != nil {
				return events.SQSEventResponse{}, fmt.Errorf("%s's answer is not a partial batch response: %w", function, err)
			}
		}
		return resp, nil
	}
}
