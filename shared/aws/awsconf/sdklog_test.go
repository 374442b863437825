package awsconf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/awsconf"
	"github.com/hookwall/hookwall/shared/base/obs"
)

// fakeDynamoDB answers every call with status, body and, when crc is not
// empty, that X-Amz-Crc32 header.
func fakeDynamoDB(t *testing.T, status int, body, crc string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if crc != "" {
			w.Header().Set("X-Amz-Crc32", crc)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// putItem makes one PutItem against url with the SDK logging through a
// JSON logger at level, and returns what was logged, line by line.
func putItem(t *testing.T, url string, level slog.Level) (lines []map[string]any, err error) {
	var buf bytes.Buffer
	log := obs.NewLogger(&buf, level)
	db := dynamodb.New(dynamodb.Options{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("a", "b", ""),
		BaseEndpoint:     aws.String(url),
		Logger:           awsconf.NewSDKLogger(log),
		RetryMaxAttempts: 1,
	})
	ctx := obs.WithAttrs(context.Background(), slog.String(obs.KeyEventKey, "line#acme#E1"))
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String("t"),
		Item:      map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}},
	})
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if jerr := json.Unmarshal([]byte(l), &m); jerr != nil {
			t.Fatalf("a log line is not JSON: %q", l)
		}
		lines = append(lines, m)
	}
	return lines, err
}

const conditionFailed = `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`

func TestConditionalCheckFailureLogsNoChecksumWarning(t *testing.T) {
	url := fakeDynamoDB(t, http.StatusBadRequest, conditionFailed, "")
	for range 3 {
		lines, err := putItem(t, url, slog.LevelInfo)
		var ccf *types.ConditionalCheckFailedException
		if err == nil || !errorsAs(err, &ccf) {
			t.Fatalf("err = %v, want ConditionalCheckFailedException", err)
		}
		if len(lines) != 0 {
			t.Fatalf("logged %v, want nothing at info", lines)
		}
	}
	// The SDK did complain: at debug the line is there, as JSON with the
	// request's attributes (so the test above can fail).
	lines, _ := putItem(t, url, slog.LevelDebug)
	if !hasLine(lines, "DEBUG", "expected checksum, 0,") {
		t.Fatalf("debug lines = %v, want the demoted checksum line", lines)
	}
}

func TestRealChecksumMismatchIsStillAWarning(t *testing.T) {
	url := fakeDynamoDB(t, http.StatusOK, `{}`, "12345")
	lines, _ := putItem(t, url, slog.LevelInfo)
	if !hasLine(lines, "WARN", "expected checksum, 12345,") {
		t.Fatalf("lines = %v, want a WARN about the checksum", lines)
	}
}

func hasLine(lines []map[string]any, level, text string) bool {
	for _, l := range lines {
		if l["level"] == level && strings.Contains(l["msg"].(string), text) &&
			l["source"] == "aws-sdk" && l[obs.KeyEventKey] == "line#acme#E1" {
			return true
		}
	}
	return false
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
