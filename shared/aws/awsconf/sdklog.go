package awsconf

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/smithy-go/logging"
)

// SDKLogger adapts a *slog.Logger to the SDK's logging.Logger, so that the
// AWS SDK's own log lines go through the project's slog logger, as JSON with
// the request's attributes (event key, trace id), instead of the SDK's
// default plain-text lines on stderr. Set it as aws.Config.Logger ([Load]
// does). It is safe for concurrent use.
//
// It also drops one spurious warning: the DynamoDB client validates every
// response body against its X-Amz-Crc32 header and, when an error response
// (such as ConditionalCheckFailedException, every duplicate delivery) does
// not carry that header, compares against 0 and warns "failed to close HTTP
// response body ... response did not match expected checksum, 0, N"
// (aws/aws-sdk-go-v2 issue 3545). That comparison proves nothing, so the
// line is logged at debug. A real mismatch, against a checksum the response
// did carry, is still a warning.
type SDKLogger struct {
	log *slog.Logger
	ctx context.Context
}

// NewSDKLogger returns the SDK logger writing through log.
func NewSDKLogger(log *slog.Logger) SDKLogger {
	return SDKLogger{log: log, ctx: context.Background()}
}

// WithContext returns an SDKLogger whose lines carry ctx's attributes; the SDK
// calls it once per operation.
func (l SDKLogger) WithContext(ctx context.Context) logging.Logger {
	return SDKLogger{log: l.log, ctx: ctx}
}

// Logf writes one SDK line at the level of its classification (Warn →
// warn, Debug → debug), with source "aws-sdk".
func (l SDKLogger) Logf(classification logging.Classification, format string, v ...any) {
	level := slog.LevelInfo
	switch classification {
	case logging.Warn:
		level = slog.LevelWarn
	case logging.Debug:
		level = slog.LevelDebug
	}
	msg := fmt.Sprintf(format, v...)
	if level == slog.LevelWarn && spuriousChecksum(msg) {
		level = slog.LevelDebug
	}
	if !l.log.Enabled(l.ctx, level) {
		return
	}
	l.log.LogAttrs(l.ctx, level, msg, slog.String("source", "aws-sdk"))
}

// spuriousChecksum reports a CRC32 mismatch against the 0 the SDK assumes
// when the response carried no X-Amz-Crc32 header.
func spuriousChecksum(msg string) bool {
	return strings.Contains(msg, "response did not match expected checksum, 0, ")
}

var (
	_ logging.Logger        = SDKLogger{}
	_ logging.ContextLogger = SDKLogger{}
)
