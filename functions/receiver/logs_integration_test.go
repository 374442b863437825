//go:build integration

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/state/store"
)

// What the receiver prints while it answers duplicates, against DynamoDB
// Local and the SQS server, wired as main wires it (settings.LoadReceiver,
// obs.NewLogger on stdout, intake.Build, EMF on stdout). Every duplicate is
// a ConditionalCheckFailed response, which carries no CRC32 header; the SDK's
// default logger printed one plain-text WARN line per duplicate on stderr
// (aws-sdk-go-v2 issue 3545). Both streams are captured at the file level.

const logsLineSecret = "0d5c1b7e3a9f4c2d8e6b1a0f9c8d7e6a"

func envDefault(t *testing.T, name, value string) {
	if os.Getenv(name) == "" {
		t.Setenv(name, value)
	}
}

// captured replaces os.Stdout and os.Stderr by one pipe until stop, which
// returns everything written to either.
func captured(t *testing.T) (stop func() []byte) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&buf, r); close(done) }()
	var once sync.Once
	stop = func() []byte {
		once.Do(func() {
			os.Stdout, os.Stderr = oldOut, oldErr
			_ = w.Close()
			<-done
			_ = r.Close()
		})
		return buf.Bytes()
	}
	t.Cleanup(func() { stop() })
	return stop
}

// duplicateRun serves the receiver as main builds it (with the SDK's
// default logger on stderr instead of ours if sdkDefault), delivers one LINE event once and then n more times,
// 16 at a time, and returns everything printed meanwhile.
func duplicateRun(t *testing.T, n int, sdkDefault bool) []byte {
	envDefault(t, "AWS_ENDPOINT_URL_DYNAMODB", awstest.DefaultDynamoDBEndpoint)
	envDefault(t, "AWS_ENDPOINT_URL_SQS", awstest.DefaultSQSEndpoint)
	envDefault(t, "AWS_REGION", "us-east-1")
	envDefault(t, "AWS_ACCESS_KEY_ID", "test")
	envDefault(t, "AWS_SECRET_ACCESS_KEY", "test")
	db, sq := awstest.DynamoDB(t), awstest.SQS(t)
	tableName := awstest.NewTable(t, db)
	queues := awstest.NewQueues(t, sq, 5, 30*time.Second)
	tenants := filepath.Join(t.TempDir(), "tenants.json")
	doc := fmt.Sprintf(`{"tenants":{"acme":{"line":{"channelSecret":%q}}}}`, logsLineSecret)
	if err := os.WriteFile(tenants, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	// The hand-off cache is off: every duplicate goes to DynamoDB, the
	// path whose SDK log lines these tests are about.
	env := map[string]string{"TABLE_NAME": tableName, "QUEUE_URL": queues.URL,
		"HOOKWALL_TENANTS_FILE": tenants, "LOG_LEVEL": "debug", "HOOKWALL_HANDOFF_CACHE_BYTES": "0"}

	stop := captured(t)
	s, warnings, err := settings.LoadReceiver(func(k string) string { return env[k] }, intake.Defaults())
	if err != nil {
		stop()
		t.Fatal(err)
	}
	log := obs.NewLogger(os.Stdout, s.LogLevel)
	warnings.Log(log)
	var optFns []func(*config.LoadOptions) error
	if sdkDefault {
		optFns = append(optFns, config.WithLogger(logging.NewStandardLogger(os.Stderr)))
	}
	h, err := intake.Build(context.Background(), s, log, os.Stdout, optFns...)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	eventID := fmt.Sprintf("01LOGS%020d", time.Now().UnixNano())
	body := fmt.Appendf(nil, `{"destination":"U00000000000000000000000000000001","events":[{"type":"follow",`+
		`"webhookEventId":%q,"deliveryContext":{"isRedelivery":false},"timestamp":%d,`+
		`"source":{"type":"user","userId":"U00000000000000000000000000000002"},"mode":"active"}]}`,
		eventID, time.Now().UnixMilli())
	mac := hmac.New(sha256.New, []byte(logsLineSecret))
	mac.Write(body)
	sig := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	post := func() int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/line/acme", bytes.NewReader(body))
		req.Header.Set("X-Line-Signature", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(); code != http.StatusOK {
		stop()
		t.Fatalf("first delivery: %d", code)
	}
	// The processor's part, done by hand: the event is SUCCEEDED, so every
	// duplicate is answered 200 (a RECEIVED one gets 503 inside the grace).
	// Its sweep attributes are removed, as a terminal write that removes
	// them leaves a record: each duplicate's claim then fails its condition
	// (it would set them again), the ConditionalCheckFailed answer whose
	// checksum warning these tests are about, and CountDelivery counts it.
	if _, err := db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(tableName),
		Key: map[string]types.AttributeValue{
			store.AttrPK: &types.AttributeValueMemberS{Value: "line#acme#" + eventID},
			store.AttrSK: &types.AttributeValueMemberS{Value: store.SKEvent}},
		UpdateExpression:         aws.String("SET #s = :s REMOVE #shard, #at"),
		ExpressionAttributeNames: map[string]string{"#s": store.AttrStatus, "#shard": store.AttrSweepShard, "#at": store.AttrSweepAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":s": &types.AttributeValueMemberS{Value: string(webhook.StatusSucceeded)}},
		ConditionExpression: aws.String("attribute_exists(pk)"),
	}); err != nil {
		stop()
		t.Fatal(err)
	}
	statuses := map[int]int{http.StatusOK: 1}
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan struct{})
	for range 16 {
		wg.Go(func() {
			for range next {
				code := post()
				mu.Lock()
				statuses[code]++
				mu.Unlock()
			}
		})
	}
	for range n {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	out := stop()
	if statuses[http.StatusOK] != n+1 {
		t.Fatalf("statuses %v, want %d × 200", statuses, n+1)
	}
	return out
}

// nonJSON returns the lines of out that are not one JSON object each.
func nonJSON(out []byte) []string {
	var bad []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		var obj map[string]any
		if len(line) > 0 && json.Unmarshal(line, &obj) != nil {
			bad = append(bad, string(line))
		}
	}
	return bad
}

func TestIntegrationThousandDuplicatesPrintOnlyJSON(t *testing.T) {
	out := duplicateRun(t, 1000, false)
	if bad := nonJSON(out); len(bad) > 0 {
		t.Fatalf("%d non-JSON lines while answering 1,000 duplicates; first: %q", len(bad), bad[0])
	}
	if !bytes.Contains(out, []byte(`"_aws"`)) {
		t.Fatalf("no EMF document captured: the capture saw nothing (%d bytes)", len(out))
	}
}

// The control: the same run with the SDK's default logger (what Build
// replaces) prints the plain-text warning, so the capture above does see
// the lines it checks for. If an SDK upgrade fixes issue 3545, this test
// fails: then the demotion in shared/aws/awsconf (sdklog.go) can go.
func TestIntegrationDefaultSDKLoggerPrintsPlainText(t *testing.T) {
	out := duplicateRun(t, 20, true)
	bad := nonJSON(out)
	if len(bad) == 0 {
		t.Fatal("the SDK's default logger printed no plain-text line for 20 duplicates")
	}
	t.Logf("%d plain-text lines, e.g. %q", len(bad), bad[0])
}
