// Package awsconf loads the one AWS SDK configuration every Hookwall
// function builds its clients from, tuned for a webhook receiver that must
// answer within a budget:
//
//   - the HTTP transport keeps enough idle connections per host for the
//     concurrency of a batch or of make run (the SDK keeps 10), so that
//     requests reuse keep-alive connections instead of dialling;
//   - the standard retryer (3 attempts) backs off at most MaxBackoff (the
//     SDK's 20 s would outlive the receive budget) and has no client-side
//     retry quota: the SDK's token bucket empties after about 50 timeouts
//     and then fails every retry at once for a while after DynamoDB or SQS
//     is back, which turns a short outage into a longer one (the budget and
//     the 3 attempts bound the retries already).
//
// Endpoints still come from the SDK's own AWS_ENDPOINT_URL_* variables;
// signing and checksum validation are the SDK's defaults.
//
// In the test builds, HOOKWALL_IAM_RECORD=<dir> makes the configuration
// record every AWS call a function makes, for `make iam-runtime` (see
// [Recorder] and [RecordEnv]); unset, as on AWS, nothing is added.
package awsconf

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookwall/hookwall/shared/aws/stamp"
)

// Tuning of [Load].
const (
	// MaxIdleConnsPerHost is how many keep-alive connections the transport
	// keeps per endpoint.
	MaxIdleConnsPerHost = 64
	// IdleConnTimeout closes connections idle for longer.
	IdleConnTimeout = 60 * time.Second
	// MaxAttempts is the retryer's attempts per call.
	MaxAttempts = 3
	// MaxBackoff caps the retryer's delay between attempts.
	MaxBackoff = 250 * time.Millisecond
)

// HTTPClient returns the SDK's HTTP client with the transport tuned as the
// package describes.
func HTTPClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns = 4 * MaxIdleConnsPerHost
		tr.MaxIdleConnsPerHost = MaxIdleConnsPerHost
		tr.IdleConnTimeout = IdleConnTimeout
	})
}

// Retryer returns the standard retryer tuned as the package describes.
func Retryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = MaxAttempts
		o.MaxBackoff = MaxBackoff
		o.RateLimiter = ratelimit.None
	})
}

// Load loads the AWS configuration (config.LoadDefaultConfig) with the
// tuned HTTP client and retryer and the SDK's own log lines sent to logger
// as JSON; optFns come last, so a caller's options win. rec names the
// function and its resources for the runtime records: when [RecordEnv] is
// set and rec.Function is not empty, every client built from the
// configuration records its calls (see [Recorder]); else rec is unused.
func Load(ctx context.Context, logger *slog.Logger, rec Recorder, optFns ...func(*config.LoadOptions) error) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx, append([]func(*config.LoadOptions) error{
		config.WithLogger(NewSDKLogger(logger)), // the SDK's own lines as JSON, with the request's attributes
		config.WithHTTPClient(HTTPClient()),
		config.WithRetryer(Retryer),
	}, optFns...)...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	cfg.APIOptions = append(cfg.APIOptions, stamp.Install) // format version and release on every item written
	if to := RecordTo(); to != "" && rec.Function != "" {
		sink, err := sinkFor(to, rec.Function)
		if err != nil {
			return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
		}
		cfg.APIOptions = append(cfg.APIOptions, rec.install(sink))
	}
	return cfg, nil
}
