//go:build samlocal

// The container test (make sam-local-test, run by CI): make sam-local's
// stack, as hookwall-sam runs it, on a table and queues of its own, driven
// from outside as a platform and an operator would. It needs the SAM CLI
// (make sam-tools), the local services (make services-up) and root (or
// sudo) to install and start the Docker engine when none answers.
package samlocal

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/state/audit"
)

// business stands for the forward target: it answers 400 (permanent) to
// the events whose key contains the id given to refuseKey, 200 to the
// others, and counts the deliveries of each key.
type business struct {
	refuse string
	mu     sync.Mutex
	got    map[string]int
}

func (b *business) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var env struct {
		Key string `json:"key"`
	}
	_ = json.NewDecoder(r.Body).Decode(&env)
	b.mu.Lock()
	b.got[env.Key]++
	refuse := b.refuse != "" && strings.Contains(env.Key, b.refuse)
	b.mu.Unlock()
	if refuse {
		http.Error(w, "refused by the test", http.StatusBadRequest)
		return
	}
	io.WriteString(w, `{"ok":true}`)
}

// refuseKey makes the business refuse the events whose key contains id.
func (b *business) refuseKey(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refuse = id
}

// keyFor returns the key of the first delivery whose key is of provider's
// and contains id, and how many deliveries that key had.
func (b *business) keyFor(provider, id string) (string, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, n := range b.got {
		if strings.HasPrefix(k, provider+"#") && strings.Contains(k, id) {
			return k, n
		}
	}
	return "", 0
}

// lines is a writer keeping the subprocess's output lines.
type lines struct {
	mu  sync.Mutex
	all []string
	buf strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	s := l.buf.String()
	i := strings.LastIndexByte(s, '\n')
	if i >= 0 {
		l.all = append(l.all, strings.Split(s[:i], "\n")...)
		l.buf.Reset()
		l.buf.WriteString(s[i+1:])
	}
	return len(p), nil
}

func (l *lines) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.all...)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func endpointPort(env, def string) string {
	if u, err := url.Parse(os.Getenv(env)); err == nil && u.Port() != "" {
		return u.Port()
	}
	return def
}

func TestSAMLocal(t *testing.T) {
	began := time.Now()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "hookwall-sam")
	build := exec.Command("go", "build", "-o", bin, "./cmd/hookwall-sam")
	build.Dir = filepath.Join(root, "dev")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	biz := &business{got: map[string]int{}}
	fwd := httptest.NewServer(biz)
	defer fwd.Close()

	name := awstest.Name("hw-sam")
	runDir := t.TempDir()
	apiPort, lambdaPort := freePort(t), freePort(t)
	ddbPort, sqsPort := endpointPort("AWS_ENDPOINT_URL_DYNAMODB", "8000"), endpointPort("AWS_ENDPOINT_URL_SQS", "9324")
	cmd := exec.Command(bin)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TABLE_NAME="+name, "QUEUE_NAME="+name, "DLQ_NAME="+name+"-dlq",
		"DDB_PORT="+ddbPort, "SQS_PORT="+sqsPort, "HOOKWALL_SAM_RUN_DIR="+runDir,
		"SAM_API_PORT="+strconv.Itoa(apiPort), "SAM_LAMBDA_PORT="+strconv.Itoa(lambdaPort),
		"FORWARD_URL="+fwd.URL+"/hookwall", "HOOKWALL_RUN_LOG=json", "HOOKWALL_TENANTS_FILE=",
		"HOOKWALL_SAM_SWEEP_EVERY=20s")
	stdout, stderr := &lines{}, &lines{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("hookwall-sam exited with %v; its last messages:\n%s", err, strings.Join(tailOf(stderr.snapshot(), 20), "\n"))
			}
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			t.Error("hookwall-sam did not stop within 2 minutes of SIGINT")
		}
	}
	defer stop()
	defer cleanupStack(t, name)

	// Ready: the JSON "ready" line (the first run builds everything: minutes).
	deadline := time.Now().Add(12 * time.Minute)
	for !hasLine(stdout.snapshot(), `"msg":"hookwall-sam: ready"`) {
		select {
		case err := <-exited:
			t.Fatalf("hookwall-sam exited before it was ready (%v):\n%s", err, strings.Join(tailOf(stderr.snapshot(), 40), "\n"))
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("hookwall-sam not ready after 12 minutes:\n%s", strings.Join(tailOf(stderr.snapshot(), 40), "\n"))
		}
	}
	ready := time.Since(began)
	t.Logf("make sam-local's stack is ready after %s (sam build, image, start-api on :%d, start-lambda on :%d)", ready.Round(time.Second), apiPort, lambdaPort)
	api := fmt.Sprintf("http://127.0.0.1:%d", apiPort)
	tenantsFile := filepath.Join(runDir, "tenants.json")
	ctx := context.Background()
	send := func(provider, id string, at time.Time) time.Duration {
		t.Helper()
		start := time.Now()
		var out strings.Builder
		if err := localrun.Send(ctx, localrun.SendOptions{Provider: provider, ID: id, At: at, URL: api,
			TenantsFile: tenantsFile, Tenant: localrun.DefaultTenant}, &out); err != nil {
			t.Fatalf("send %s: %v\n%s", provider, err, out.String())
		}
		return time.Since(start)
	}
	// view polls the events API (through start-api and the receiver's
	// container) until the event's status is want.
	view := func(key string, want webhook.Status, within time.Duration) *audit.View {
		t.Helper()
		parts := strings.SplitN(key, "#", 3)
		u := api + "/events/" + parts[0] + "/" + parts[1] + "/" + url.PathEscape(parts[2])
		var last string
		for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
			resp, err := http.Get(u)
			if err != nil {
				last = err.Error()
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = resp.Status + " " + string(b)
			if resp.StatusCode != http.StatusOK {
				continue
			}
			var v audit.View
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("events API: %v: %s", err, b)
			}
			if v.Record.Status == want {
				return &v
			}
		}
		t.Fatalf("%s not %s within %s; the events API last said: %.400s", key, want, within, last)
		return nil
	}
	waitDelivery := func(provider, id string, within time.Duration) string {
		t.Helper()
		for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			if k, _ := biz.keyFor(provider, id); k != "" {
				return k
			}
		}
		t.Fatalf("no %s delivery of %s reached the business within %s", provider, id, within)
		return ""
	}

	// Every provider the signer offers: signed, sent, SUCCEEDED.
	var receiverTimes []time.Duration
	keys := map[string]string{}
	at := time.Now().Truncate(time.Second)
	ids := map[string]string{}
	for _, p := range signer.Providers() {
		ids[p] = localrun.NewDemoID(p)
		took := send(p, ids[p], at)
		receiverTimes = append(receiverTimes, took)
		key := waitDelivery(p, ids[p], 3*time.Minute)
		v := view(key, webhook.StatusSucceeded, time.Minute)
		keys[p] = key
		t.Logf("%-8s %s SUCCEEDED (attempts %d; history %s); receiver answered in %s", p, key, v.Record.Attempts, path(v), took.Round(time.Millisecond))
	}

	// A duplicate: answered with success, not processed again.
	dup := signer.Providers()[0]
	took := send(dup, ids[dup], at)
	receiverTimes = append(receiverTimes, took)
	time.Sleep(8 * time.Second) // several batching windows: a wrongly enqueued duplicate would be delivered by now
	if _, n := biz.keyFor(dup, ids[dup]); n != 1 {
		t.Errorf("duplicate of %s: the business got %d deliveries, want 1", keys[dup], n)
	}
	v := view(keys[dup], webhook.StatusSucceeded, 10*time.Second)
	if v.Record.Attempts != 1 {
		t.Errorf("duplicate of %s: attempts %d, want 1", keys[dup], v.Record.Attempts)
	}
	t.Logf("duplicate %s: answered 2xx in %s, not processed again (1 delivery, attempts %d, still SUCCEEDED)", keys[dup], took.Round(time.Millisecond), v.Record.Attempts)

	// A permanently failing event: FAILED by the processor, dead-lettered,
	// compensated by the compensator's container (DEAD: nothing to undo).
	failProvider := signer.Providers()[0]
	failID := localrun.NewDemoID(failProvider)
	biz.refuseKey(failID)
	send(failProvider, failID, time.Now())
	failKey := waitDelivery(failProvider, failID, 3*time.Minute)
	v = view(failKey, webhook.StatusDead, 3*time.Minute)
	hist := path(v)
	if !strings.Contains(hist, "FAILED/processor") || !strings.Contains(hist, "DEAD/compensator") {
		t.Errorf("%s: history %s, want FAILED by the processor then DEAD by the compensator", failKey, hist)
	}
	if !strings.Contains(v.Record.LastError, "400") {
		t.Errorf("%s: last error %q, want the business's 400", failKey, v.Record.LastError)
	}
	// The runner logs an invocation once it has returned: after the function
	// wrote DEAD.
	compInvoked := false
	for end := time.Now().Add(15 * time.Second); !compInvoked && time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		for _, l := range stdout.snapshot() {
			compInvoked = compInvoked || (strings.Contains(l, `"msg":"invoke"`) && strings.Contains(l, `"function":"CompensatorFunction"`) && strings.Contains(l, `"ok":true`))
		}
	}
	if !compInvoked {
		t.Error("no successful invocation of CompensatorFunction through start-lambda in the runner's log")
	}
	t.Logf("failing %s: dead-lettered and compensated by the compensator's container (history %s; last error %q)", failKey, hist, v.Record.LastError)

	// The events API for one event, in full.
	if len(v.History) == 0 || v.Record.Key != failKey {
		t.Errorf("events API view of %s: %+v", failKey, v.Record)
	}

	// Invoke times. Cold: each function's first invocation, which creates
	// and starts its container (the receiver's seen from the sender, the
	// others from the runner's invoke lines). Warm: warmN more, the
	// container reused: the events API through start-api for the receiver,
	// lambda.Invoke through start-lambda with an empty SQS batch and a
	// sweep for the processor and the compensator.
	const warmN = 15
	warm := map[string][]time.Duration{}
	for range warmN {
		start := time.Now()
		view(keys[dup], webhook.StatusSucceeded, 10*time.Second)
		warm[Receiver] = append(warm[Receiver], time.Since(start))
	}
	lc := NewLambdaClient(fmt.Sprintf("http://127.0.0.1:%d", lambdaPort), Region)
	sweep, _ := localrun.ScheduledEvent(time.Now(), Region, "test")
	for fn, payload := range map[string][]byte{Processor: []byte(`{"Records":[]}`), Compensator: sweep} {
		for range warmN {
			start := time.Now()
			out, err := lc.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(fn), Payload: payload})
			if err != nil {
				t.Fatalf("%s: %v", fn, err)
			}
			if out.FunctionError != nil {
				t.Fatalf("%s: %s", fn, out.Payload)
			}
			warm[fn] = append(warm[fn], time.Since(start))
		}
	}
	cold := map[string]time.Duration{Receiver: receiverTimes[0]}
	for _, fn := range []string{Processor, Compensator} {
		var colds, warms []time.Duration
		for _, l := range stdout.snapshot() {
			var m struct {
				Msg, Function string
				MS            float64
				Cold, OK      bool
			}
			if json.Unmarshal([]byte(l), &m) != nil || m.Msg != "invoke" || m.Function != fn || !m.OK {
				continue
			}
			d := time.Duration(m.MS * float64(time.Millisecond))
			if m.Cold {
				colds = append(colds, d)
			} else {
				warms = append(warms, d)
			}
		}
		if len(colds) == 0 {
			t.Errorf("%s: no successful cold invocation logged", fn)
			continue
		}
		cold[fn] = colds[0]
		warm[fn] = append(warm[fn], warms...)
	}
	arch := os.Getenv("SAM_LOCAL_ARCH")
	if arch == "" {
		arch = HostArch()
	}
	for _, fn := range Functions {
		w := warm[fn]
		sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
		t.Logf("invoke %-20s %s: cold %6.0f ms, warm min %4.0f ms, median %5.0f ms, p90 %5.0f ms (n=%d)", fn, arch,
			ms(cold[fn]), ms(w[0]), ms(median(w)), ms(w[len(w)*9/10]), len(w))
	}

	stop()
	if !hasLine(stderr.snapshot(), "hookwall-sam: stopped") {
		t.Errorf("no stop message:\n%s", strings.Join(tailOf(stderr.snapshot(), 20), "\n"))
	}
	if out, err := exec.Command("docker", "ps", "-q", "--filter", "label=sam.cli.container.type=lambda").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		t.Errorf("Lambda containers still running after the stop: %s", out)
	}
	t.Logf("container test done in %s (ready after %s)", time.Since(began).Round(time.Second), ready.Round(time.Second))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// path is an event's history as status/function words.
func path(v *audit.View) string {
	var p []string
	for _, h := range v.History {
		p = append(p, string(h.To)+"/"+h.Function)
	}
	return strings.Join(p, " ")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func hasLine(all []string, sub string) bool {
	for _, l := range all {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

func tailOf(all []string, n int) []string {
	if len(all) > n {
		return all[len(all)-n:]
	}
	return all
}

// cleanupStack deletes the test's table and queues.
func cleanupStack(t *testing.T, name string) {
	ctx := context.Background()
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	db := dynamodb.New(dynamodb.Options{Region: Region, Credentials: creds,
		BaseEndpoint: aws.String("http://127.0.0.1:" + endpointPort("AWS_ENDPOINT_URL_DYNAMODB", "8000"))})
	_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	q := sqs.New(sqs.Options{Region: Region, Credentials: creds,
		BaseEndpoint: aws.String("http://127.0.0.1:" + endpointPort("AWS_ENDPOINT_URL_SQS", "9324"))})
	for _, n := range []string{name, name + "-dlq"} {
		if out, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(n)}); err == nil {
			_, _ = q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
		}
	}
}
