//go:build integration

package chaos

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/dev/internal/localstack"
)

// startStack starts a private stack on free ports and stops it in t.Cleanup
// (showing the servers' logs when the test failed).
func startStack(t *testing.T) *Stack {
	t.Helper()
	ddbPort, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	sqsPort, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := StartStack(ctx, filepath.Join(dir, "run"), ddbPort, sqsPort)
	if err != nil {
		t.Fatalf("StartStack: %v", err)
	}
	t.Logf("stack up in %v: ddb %s (pid %d), sqs %s (pid %d)", time.Since(start).Round(time.Millisecond),
		s.DynamoURL, s.DynamoPID, s.SQSURL, s.SQSPID)
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{"ddb.log", "sqs.log"} {
				t.Logf("--- %s ---\n%s", f, tailFile(filepath.Join(s.Dir, f), 20))
			}
		}
		if err := s.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		for _, pid := range []int{s.DynamoPID, s.SQSPID} {
			if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil && (cmdlineHas(pid, localstack.DynamoDB.Marker) || cmdlineHas(pid, localstack.SQS.Marker)) {
				t.Errorf("pid %d still running after Stop", pid)
			}
		}
	})
	return s
}

// awsHTTP is a client with its own connection pool and an overall timeout.
func awsHTTP(t *testing.T, timeout time.Duration) *http.Client {
	c := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: timeout}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// newDynamo is a real SDK client for url: no retries, so each fault shows.
func newDynamo(t *testing.T, url string, timeout time.Duration) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(url),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		RetryMaxAttempts: 1,
		HTTPClient:       awsHTTP(t, timeout),
	})
}

// listTables calls ListTables with a per-call deadline.
func listTables(c *dynamodb.Client, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := c.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		return err
	}
	if len(out.TableNames) == 0 {
		return errors.New("ListTables: no tables (services-up.sh creates one)")
	}
	return nil
}

func TestChaosIntegration(t *testing.T) {
	s := startStack(t)
	for _, k := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "TABLE_NAME", "QUEUE_URL", "DLQ_URL", "AWS_REGION"} {
		if envValue(s.Env, k) == "" {
			t.Errorf("stack Env lacks %s: %q", k, s.Env)
		}
	}
	h := newHarness(t, strings.TrimPrefix(s.DynamoURL, "http://"), strings.TrimPrefix(s.SQSURL, "http://"))
	const long = 30 * time.Second
	ddb := newDynamo(t, h.DynamoURL, long)

	t.Run("Healthy", func(t *testing.T) {
		if err := listTables(newDynamo(t, s.DynamoURL, long), long); err != nil {
			t.Fatalf("direct ListTables: %v", err)
		}
		if err := listTables(ddb, long); err != nil {
			t.Fatalf("ListTables through proxy: %v", err)
		}
		q := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(h.SQSURL),
			Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), RetryMaxAttempts: 1,
			HTTPClient: awsHTTP(t, long)})
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		out, err := q.ListQueues(ctx, &sqs.ListQueuesInput{})
		if err != nil || len(out.QueueUrls) == 0 {
			t.Fatalf("ListQueues through proxy: %v (%d queues)", err, len(out.QueueUrls))
		}
	})
	t.Run("Latency", func(t *testing.T) {
		const lat = 400 * time.Millisecond
		remove, err := h.Latency(Dynamo, lat, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer remove()
		for i := 0; i < 2; i++ {
			start := time.Now()
			err := listTables(ddb, long)
			if d := time.Since(start); err != nil || d < lat {
				t.Errorf("ListTables %d with latency: %v after %v, want success after >= %v", i, err, d, lat)
			}
		}
		remove()
		if err := listTables(ddb, long); err != nil {
			t.Errorf("ListTables after remove: %v", err)
		}
	})
	t.Run("Outage", func(t *testing.T) {
		restore, err := h.Outage(Dynamo)
		if err != nil {
			t.Fatal(err)
		}
		defer restore()
		if err := listTables(ddb, long); err == nil {
			t.Fatal("ListTables during outage succeeded")
		} else {
			t.Logf("during outage: %v", err)
		}
		restore()
		if err := eventually(long, func() error { return listTables(ddb, long) }); err != nil {
			t.Errorf("ListTables after restore: %v", err)
		}
	})
	t.Run("ResetPeer", func(t *testing.T) {
		remove, err := h.ResetPeer(Dynamo, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer remove()
		for i := 0; i < 2; i++ {
			if err := listTables(ddb, long); err == nil {
				t.Errorf("ListTables %d with reset_peer succeeded", i)
			} else {
				t.Logf("with reset_peer: %v", err)
			}
		}
		remove()
		if err := eventually(long, func() error { return listTables(ddb, long) }); err != nil {
			t.Errorf("ListTables after remove: %v", err)
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		remove, err := h.Timeout(Dynamo, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer remove()
		if err := listTables(newDynamo(t, h.DynamoURL, time.Second), long); err == nil {
			t.Error("ListTables with timeout toxic succeeded")
		}
		remove()
		if err := eventually(long, func() error { return listTables(ddb, long) }); err != nil {
			t.Errorf("ListTables after remove: %v", err)
		}
	})
	t.Run("Pause", func(t *testing.T) {
		short := newDynamo(t, h.DynamoURL, time.Second)
		resume, err := Pause(s.DynamoPID)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resume() })
		start := time.Now()
		if err := listTables(short, time.Second); err == nil {
			t.Fatal("ListTables with DynamoDB Local paused succeeded")
		} else {
			t.Logf("paused: %v after %v", err, time.Since(start).Round(time.Millisecond))
		}
		if err := resume(); err != nil {
			t.Fatal(err)
		}
		if err := eventually(2*long, func() error { return listTables(ddb, long) }); err != nil {
			t.Errorf("ListTables after resume: %v", err)
		}
	})
}

// TestStartStackPortTaken: when DynamoDB Local cannot bind its port,
// StartStack fails with the script's output and leaves nothing running.
func TestStartStackPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers HTTP
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	sqsPort, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s, err := StartStack(ctx, dir, l.Addr().(*net.TCPAddr).Port, sqsPort)
	if err == nil {
		_ = s.Stop()
		t.Fatal("StartStack on a taken port succeeded")
	}
	t.Logf("StartStack: %v", err)
	for _, f := range []string{"ddb.pid", "sqs.pid"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s left behind after failed start", f)
		}
	}
}
