package intake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/awslog"
	"github.com/hookwall/hookwall/shared/config"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/queue"
	"github.com/hookwall/hookwall/shared/store"
)

// Settings is the receiver's configuration, read from the environment by
// LoadSettings. Field comments name the variable.
type Settings struct {
	// TableName: TABLE_NAME (required).
	TableName string
	// QueueURL: QUEUE_URL (required).
	QueueURL string
	// TenantsFile: HOOKWALL_TENANTS_FILE (local), or
	// TenantsSecretARN: TENANTS_SECRET_ARN (AWS). Exactly one is required.
	TenantsFile      string
	TenantsSecretARN string
	// LogLevel: LOG_LEVEL (debug, info, warn, error; default info).
	LogLevel slog.Level
	// DedupWindow: HOOKWALL_DEDUP_WINDOW, a Go duration (default 168h).
	DedupWindow time.Duration
	// ReenqueueGrace: HOOKWALL_REENQUEUE_GRACE, a Go duration (default the
	// budget + 1.5s; it must exceed the budget). See Config.ReenqueueGrace.
	ReenqueueGrace time.Duration
	// MaxEventAge: HOOKWALL_MAX_EVENT_AGE, a Go duration (default the dedup
	// window less 1h; it must be shorter than the window). See Config.MaxEventAge.
	MaxEventAge time.Duration
	// Budget: HOOKWALL_RECEIVE_BUDGET, a Go duration (default 1.5s): the most
	// one delivery may spend on DynamoDB and SQS before it answers 503.
	Budget time.Duration
	// MaxBody: HOOKWALL_MAX_BODY_BYTES (default 1048576).
	MaxBody int64
	// Tolerance: HOOKWALL_TIMESTAMP_TOLERANCE, a Go duration (default 300s):
	// how far a signed WeCom/WeChat/Standard Webhooks timestamp may be from now.
	// A negative value turns the WeCom/WeChat check off.
	Tolerance time.Duration
}

// LoadSettings reads Settings through getenv (os.Getenv in main) and
// validates them, naming every variable at fault.
func LoadSettings(getenv func(string) string) (Settings, error) {
	s := Settings{
		TableName:        getenv("TABLE_NAME"),
		QueueURL:         getenv("QUEUE_URL"),
		TenantsFile:      getenv("HOOKWALL_TENANTS_FILE"),
		TenantsSecretARN: getenv("TENANTS_SECRET_ARN"),
		LogLevel:         obs.ParseLevel(getenv("LOG_LEVEL")),
	}
	var errs []error
	if s.TableName == "" {
		errs = append(errs, errors.New("TABLE_NAME is required"))
	}
	if s.QueueURL == "" {
		errs = append(errs, errors.New("QUEUE_URL is required"))
	}
	if (s.TenantsFile == "") == (s.TenantsSecretARN == "") {
		errs = append(errs, errors.New("set exactly one of HOOKWALL_TENANTS_FILE and TENANTS_SECRET_ARN"))
	}
	duration := func(name string, def time.Duration, dst *time.Duration) {
		v := getenv(name)
		if v == "" {
			*dst = def
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		*dst = d
	}
	duration("HOOKWALL_DEDUP_WINDOW", DefaultDedupWindow, &s.DedupWindow)
	duration("HOOKWALL_REENQUEUE_GRACE", 0, &s.ReenqueueGrace)
	duration("HOOKWALL_MAX_EVENT_AGE", 0, &s.MaxEventAge)
	duration("HOOKWALL_TIMESTAMP_TOLERANCE", 300*time.Second, &s.Tolerance)
	duration("HOOKWALL_RECEIVE_BUDGET", DefaultBudget, &s.Budget)
	s.MaxBody = DefaultMaxBody
	if v := getenv("HOOKWALL_MAX_BODY_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("HOOKWALL_MAX_BODY_BYTES: want a positive integer, got %q", v))
		}
		s.MaxBody = n
	}
	if s.DedupWindow <= 0 {
		errs = append(errs, errors.New("HOOKWALL_DEDUP_WINDOW must be positive"))
	}
	if s.Budget <= 0 {
		errs = append(errs, errors.New("HOOKWALL_RECEIVE_BUDGET must be positive"))
	}
	if s.ReenqueueGrace == 0 {
		s.ReenqueueGrace = s.Budget + DefaultGraceMargin
	}
	if s.ReenqueueGrace <= s.Budget {
		errs = append(errs, fmt.Errorf("HOOKWALL_REENQUEUE_GRACE (%s) must exceed HOOKWALL_RECEIVE_BUDGET (%s)", s.ReenqueueGrace, s.Budget))
	}
	if s.MaxEventAge == 0 {
		s.MaxEventAge = s.DedupWindow - min(DefaultEventAgeMargin, s.DedupWindow/2)
	}
	if s.MaxEventAge <= 0 || s.MaxEventAge >= s.DedupWindow {
		errs = append(errs, fmt.Errorf("HOOKWALL_MAX_EVENT_AGE (%s) must be positive and shorter than HOOKWALL_DEDUP_WINDOW (%s)", s.MaxEventAge, s.DedupWindow))
	}
	if err := errors.Join(errs...); err != nil {
		return Settings{}, fmt.Errorf("intake: configuration: %w", err)
	}
	return s, nil
}

// Build wires a Handler from settings: the tenants document, the DynamoDB
// table and the SQS queue (endpoints come from the SDK's own
// AWS_ENDPOINT_URL_* variables through awsCfg), logging to logger and writing
// EMF metrics to metricsOut.
func Build(ctx context.Context, s Settings, awsCfg aws.Config, logger *slog.Logger, metricsOut io.Writer) (*Handler, error) {
	awsCfg.Logger = awslog.New(logger) // the SDK's own lines as JSON, with the request's attributes
	tenants, err := config.Load(ctx, config.Source{
		File: s.TenantsFile, SecretARN: s.TenantsSecretARN,
		Secrets: config.SecretsManager{Client: secretsmanager.NewFromConfig(awsCfg)},
	})
	if err != nil {
		return nil, err
	}
	parsers, err := BuildParsers(tenants, ParserOptions{Tolerance: s.Tolerance})
	if err != nil {
		return nil, err
	}
	table, err := store.New(store.Config{Client: dynamodb.NewFromConfig(awsCfg), TableName: s.TableName})
	if err != nil {
		return nil, err
	}
	q, err := queue.New(queue.Config{Client: sqs.NewFromConfig(awsCfg), URL: s.QueueURL})
	if err != nil {
		return nil, err
	}
	return New(Config{
		Parsers:        parsers,
		Store:          table,
		Queue:          q,
		Logger:         logger,
		Metrics:        obs.NewMetrics(metricsOut, "Hookwall", map[string]string{"Function": "receiver"}),
		DedupWindow:    s.DedupWindow,
		ReenqueueGrace: s.ReenqueueGrace,
		MaxEventAge:    s.MaxEventAge,
		MaxBody:        s.MaxBody,
		Budget:         s.Budget,
	})
}
