package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// settleGrace is the re-enqueue grace the twin runs with unless
// HOOKWALL_REENQUEUE_GRACE is set: longer than any run.
const settleGrace = time.Hour

type env struct {
	handler  *intake.Handler
	tn       *tenants.Tenant // signs the deliveries
	tenant   string
	counter  *counter
	ddbPid   int
	admin    *dynamodb.Client
	table    string
	settings settings.Receiver
}

func run(ctx context.Context, o options) error {
	if os.Getenv("HOOKWALL_TENANTS_FILE") == "" {
		_ = os.Setenv("HOOKWALL_TENANTS_FILE", "infra/local/tenants.json")
	}
	if os.Getenv("HOOKWALL_REENQUEUE_GRACE") == "" {
		// A deployment's processor takes each record off RECEIVED within
		// milliseconds; this twin runs none, so a duplicate arriving past
		// the default grace would find its record still RECEIVED and take
		// its hand-off over (two more writes and a message), which no
		// deployment does (docs/PERFORMANCE.md). The grace outlasts the run.
		_ = os.Setenv("HOOKWALL_REENQUEUE_GRACE", settleGrace.String())
	}
	s, _, err := settings.LoadReceiver(os.Getenv, intake.Defaults())
	if err != nil {
		return err
	}
	doc, err := tenants.LoadFile(s.TenantsFile)
	if err != nil {
		return err
	}
	tn, found := doc.Tenant(o.tenant)
	if !found {
		return fmt.Errorf("no tenant %q in the tenants document", o.tenant)
	}
	if _, configured := tn.Settings(line.Name); !configured {
		return fmt.Errorf("tenant %q has no LINE channel in the tenants document", o.tenant)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("-log: %w", err)
	}
	cnt := newCounter()
	// The receiver exactly as the Lambda builds it (intake.Build), with the
	// counting middleware on every client of its AWS config. The JSON logger
	// and the EMF metrics are the production ones, written to io.Discard.
	h, err := intake.Build(ctx, s, obs.NewLogger(io.Discard, level), io.Discard,
		config.WithAPIOptions([]func(*middleware.Stack) error{cnt.install}))
	if err != nil {
		return err
	}
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	e := &env{handler: h, tn: tn, tenant: o.tenant, counter: cnt, admin: dynamodb.NewFromConfig(awsCfg),
		table: s.TableName, settings: s}
	if o.ddbPidFile != "" {
		b, err := os.ReadFile(o.ddbPidFile)
		if err != nil {
			return fmt.Errorf("-ddb-pid-file: %w", err)
		}
		e.ddbPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}

	result := map[string]any{
		"tool": "hookwall-peer",
		"date": time.Now().UTC().Format(time.RFC3339Nano),
		"versions": map[string]any{
			"go": runtime.Version(), "dynamodb_local_pid": e.ddbPid,
		},
		"config": map[string]any{
			"mode": "shuffled", "n": o.n, "c": o.c, "dup2": o.dup2, "dup3": o.dup3, "seed": o.seed,
			"warmup_unique_events": o.warmup, "table": s.TableName, "queue_url": s.QueueURL,
			"endpoint_dynamodb": os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"), "endpoint_sqs": os.Getenv("AWS_ENDPOINT_URL_SQS"),
			"receiver": map[string]any{
				"entry":    "intake.Build + Handler.HandleAPIGateway (in-process, API Gateway payload 2.0)",
				"provider": "line", "tenant": o.tenant, "events_per_delivery": 1,
				"budget": s.Budget.String(), "reenqueue_grace": graceOf(s).String(), "dedup_window": s.DedupWindow.String(),
				"log": "production JSON logger at " + level.String() + " to io.Discard; EMF metrics to io.Discard",
			},
			"sdk":  "aws-sdk-go-v2 defaults (standard retryer, 3 attempts)",
			"cpus": runtime.NumCPU(),
		},
	}
	if o.warmup > 0 {
		var rounds []map[string]any
		for done, r := 0, 0; done < o.warmup; r++ {
			k := min(500, o.warmup-done)
			w, err := e.shuffled(ctx, "warmup", k, o.c, o.seed+1+uint32(r), o, true)
			if err != nil {
				return err
			}
			rounds = append(rounds, map[string]any{"deliveries": w["total_deliveries"], "deliveries_per_s": w["deliveries_per_s"],
				"p50_ms": w["latency_ms"].(map[string]any)["p50"], "errors": w["errors"]})
			done += k
		}
		result["warmup"] = map[string]any{"unique_events": o.warmup, "rounds": rounds}
		fmt.Fprintf(os.Stderr, "[hookwall-peer] warmup: %d unique events at C=%d\n", o.warmup, o.c)
	}
	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	sh, err := e.shuffled(ctx, "shuffled", o.n, o.c, o.seed, o, o.skipVerify)
	stopProfile()
	if err != nil {
		return err
	}
	result["shuffled"] = sh
	ok := sh["errors"].(int) == 0 && sh["events_without_a_message"].(int) == 0
	if tc, _ := sh["table_check"].(map[string]any); tc != nil {
		ok = ok && tc["ok"].(bool)
	}
	result["ok"] = ok
	fmt.Fprintf(os.Stderr, "[hookwall-peer] shuffled: %v deliveries/s, p50 %v ms, p99 %v ms\n",
		sh["deliveries_per_s"], sh["latency_ms"].(map[string]any)["p50"], sh["latency_ms"].(map[string]any)["p99"])
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(result); err != nil {
		return err
	}
	if !ok {
		return errors.New("check failed: errors, events without a message, or table check")
	}
	return nil
}

// startCPUProfile starts a CPU profile into path ("" : none) and returns
// what stops it.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func graceOf(s settings.Receiver) time.Duration {
	if s.ReenqueueGrace > 0 {
		return s.ReenqueueGrace
	}
	return s.Budget + intake.DefaultGraceMargin
}

// lineEvent returns a LINE delivery of one message event, signed with the
// tenant's channel secret as LINE signs it (package signer).
func (e *env) lineEvent(id string, ts int64) (*signer.Request, error) {
	body := fmt.Sprintf(`{"destination":"Ub8b2d8e5add3e2eaff4ad4451caab599","events":[{"type":"message",`+
		`"message":{"type":"text","id":"468789577898262530","text":"peer-bench"},"webhookEventId":%q,`+
		`"deliveryContext":{"isRedelivery":false},"timestamp":%d,"source":{"type":"user","userId":"U1f31c2a4c885ab0273b18b8b6a799b72"},`+
		`"replyToken":"fe435e8eee6cf9a3513f95ee23341731","mode":"active"}]}`, id, ts)
	return signer.Sign(e.tn, line.Name, []byte(body), signer.Options{})
}

// countRecords counts the event records whose key starts with prefix (an
// uncounted admin client, after the window).
func (e *env) countRecords(ctx context.Context, prefix string) (int, error) {
	n := 0
	var start map[string]dbtypes.AttributeValue
	for {
		out, err := e.admin.Scan(ctx, &dynamodb.ScanInput{
			TableName: aws.String(e.table), Select: dbtypes.SelectCount, ExclusiveStartKey: start,
			FilterExpression:          aws.String("begins_with(pk, :p) AND sk = :sk"),
			ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":p": &dbtypes.AttributeValueMemberS{Value: prefix}, ":sk": &dbtypes.AttributeValueMemberS{Value: "EVENT"}},
		})
		if err != nil {
			return 0, err
		}
		n += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return n, nil
		}
		start = out.LastEvaluatedKey
	}
}
