package localrun

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/signer"
	"github.com/hookwall/hookwall/shared/tenants"
	"github.com/hookwall/hookwall/shared/webhook"
)

// SendProviders are the providers [Send] has a demo event for.
var SendProviders = []string{webhook.LINE, webhook.WeCom, webhook.WeChat, webhook.Standard}

// NewDemoID returns a fresh event id of provider's kind: LINE a
// webhookEventId, WeCom and WeChat a numeric MsgId, Standard Webhooks a
// webhook-id.
func NewDemoID(provider string) string {
	switch provider {
	case webhook.WeCom, webhook.WeChat:
		n, _ := rand.Int(rand.Reader, big.NewInt(9e18))
		return strconv.FormatInt(n.Int64()+1e17, 10)
	case webhook.Standard:
		return "msg_" + rand.Text()
	default:
		return rand.Text()
	}
}

// DemoBody returns the body of a demo event for provider: a LINE text
// message, a WeCom text message, a WeChat text message or a Standard
// Webhooks order.paid, with event id id at time at. The same id and time
// give the same body, so sending it again is a duplicate.
func DemoBody(provider, id string, at time.Time) ([]byte, error) {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	switch provider {
	case webhook.LINE:
		return []byte(`{"destination":"U00000000000000000000000000000001","events":[{"type":"message",` +
			`"message":{"type":"text","id":"534897012345678901","quoteToken":"q1","text":"Hello from make run"},` +
			`"webhookEventId":` + q(id) + `,"deliveryContext":{"isRedelivery":false},"timestamp":` + strconv.FormatInt(at.UnixMilli(), 10) + `,` +
			`"source":{"type":"user","userId":"U4af4980629aaaaaaaaaaaaaaaaaaaaaaa"},"replyToken":"b60d432864f44d079f6d8efe86cf404b","mode":"active"}]}`), nil
	case webhook.WeCom:
		return []byte(`<xml><ToUserName><![CDATA[` + DemoWeComCorpID + `]]></ToUserName><FromUserName><![CDATA[ZhangSan]]></FromUserName>` +
			`<CreateTime>` + strconv.FormatInt(at.Unix(), 10) + `</CreateTime><MsgType><![CDATA[text]]></MsgType>` +
			`<Content><![CDATA[Hello from make run]]></Content><MsgId>` + id + `</MsgId><AgentID>1000002</AgentID></xml>`), nil
	case webhook.WeChat:
		return []byte(`<xml><ToUserName><![CDATA[gh_0000000000001]]></ToUserName><FromUserName><![CDATA[oKzKivH6hwSntH4tXK9ieGIoh47G]]></FromUserName>` +
			`<CreateTime>` + strconv.FormatInt(at.Unix(), 10) + `</CreateTime><MsgType><![CDATA[text]]></MsgType>` +
			`<Content><![CDATA[Hello from make run]]></Content><MsgId>` + id + `</MsgId></xml>`), nil
	case webhook.Standard:
		return []byte(`{"type":"order.paid","timestamp":` + q(at.UTC().Format(time.RFC3339)) +
			`,"data":{"orderId":` + q(id) + `,"amount":4200}}`), nil
	}
	return nil, fmt.Errorf("localrun: no demo event for provider %q (want one of %s)", provider, strings.Join(SendProviders, ", "))
}

// SendOptions say which demo event [Send] sends where.
type SendOptions struct {
	// Provider is line, wecom, wechat or standard.
	Provider string
	// ID is the event id (empty: a new one, so a new event).
	ID string
	// At is the event's own time (zero: now).
	At time.Time
	// URL is the receiver's base URL (default http://127.0.0.1:3000).
	URL string
	// TenantsFile is the tenants document to sign with; Tenant the tenant.
	TenantsFile, Tenant string
}

// Send signs the demo event o describes with the tenant's secrets (package
// shared/signer: as the platform would, at this moment) and POSTs it to the
// receiver. It writes the request line and the answer to out, and fails
// unless the answer is 2xx.
func Send(ctx context.Context, o SendOptions, out io.Writer) error {
	if o.ID == "" {
		o.ID = NewDemoID(o.Provider)
	}
	if o.At.IsZero() {
		o.At = time.Now()
	}
	body, err := DemoBody(o.Provider, o.ID, o.At)
	if err != nil {
		return err
	}
	doc, err := tenants.LoadFile(o.TenantsFile)
	if err != nil {
		return fmt.Errorf("localrun: send: %w", err)
	}
	t, ok := doc.Tenant(o.Tenant)
	if !ok {
		return fmt.Errorf("localrun: send: no tenant %q in %s", o.Tenant, o.TenantsFile)
	}
	opts := signer.Options{}
	if o.Provider == webhook.Standard {
		opts.MessageID = o.ID
	}
	sreq, err := signer.Sign(t, o.Provider, body, opts)
	if err != nil {
		return fmt.Errorf("localrun: send: %w", err)
	}
	req, err := sreq.HTTPRequest(ctx, o.URL)
	if err != nil {
		return fmt.Errorf("localrun: send: %w", err)
	}
	fmt.Fprintf(out, "→ %s %s (%s event %s, signed now with tenant %q of %s)\n", req.Method, req.URL.Redacted(),
		o.Provider, o.ID, o.Tenant, o.TenantsFile)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("localrun: send: %w (is the runner up? make run)", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(out, "← %s %s\n", resp.Status, strings.TrimSpace(string(answer)))
	if resp.StatusCode == http.StatusServiceUnavailable {
		return fmt.Errorf("localrun: send: the receiver answered %s: the platform would retry later. "+
			"If you sent this event a moment ago, it is still being handed off (HOOKWALL_REENQUEUE_GRACE): send it again in a few seconds", resp.Status)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("localrun: send: the receiver answered %s", resp.Status)
	}
	return nil
}

// SendCommand runs "hookwall-run send <provider> [flags]" with args (the
// words after "send"). Defaults: the tenants file and URL a runner with the
// same environment uses.
func SendCommand(ctx context.Context, args []string, getenv func(string) string, wd, exe string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("hookwall-run send", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Usage = func() {
		fmt.Fprintf(errOut, "Usage: hookwall-run send <%s> [flags]\n\n"+
			"Signs a demo event with the tenant's secrets, as the platform would now, and sends it to the\n"+
			"receiver of `make run`. The same -id and -at send the same event again: a duplicate.\n\nFlags:\n",
			strings.Join(SendProviders, "|"))
		fs.PrintDefaults()
	}
	var o SendOptions
	var at int64
	fs.StringVar(&o.ID, "id", "", "event id (LINE webhookEventId, WeCom/WeChat MsgId, Standard webhook-id); empty: a new event")
	fs.Int64Var(&at, "at", 0, "the event's time, unix seconds; 0: now")
	fs.StringVar(&o.URL, "url", "", "the receiver's base URL (default http://127.0.0.1:$PORT, PORT default 3000)")
	fs.StringVar(&o.TenantsFile, "tenants", "", "tenants document (default $HOOKWALL_TENANTS_FILE, else .local/run/tenants.json)")
	fs.StringVar(&o.Tenant, "tenant", DefaultTenant, "tenant")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fs.Usage()
		return errors.New("hookwall-run send: name a provider first")
	}
	o.Provider = args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("hookwall-run send: unexpected arguments %q", fs.Args())
	}
	if at != 0 {
		o.At = time.Unix(at, 0)
	}
	def, err := sendDefaults(getenv, wd, exe)
	if err != nil && (o.URL == "" || o.TenantsFile == "") {
		return err
	}
	if o.URL == "" {
		o.URL = def.URL
	}
	if o.TenantsFile == "" {
		o.TenantsFile = def.TenantsFile
	}
	return Send(ctx, o, out)
}

// sendDefaults are the URL and tenants file a send uses without flags: the
// root is found from the working directory, else from the binary's place
// (<root>/.local/bin/hookwall-run), so the printed commands work anywhere.
func sendDefaults(getenv func(string) string, wd, exe string) (SendOptions, error) {
	cfg, err := LoadConfig(getenv, wd)
	if err != nil && exe != "" && getenv("HOOKWALL_ROOT") == "" {
		if root, rerr := FindRoot(filepath.Dir(exe)); rerr == nil {
			cfg, err = LoadConfig(func(k string) string {
				if k == "HOOKWALL_ROOT" {
					return root
				}
				return getenv(k)
			}, wd)
		}
	}
	if err != nil {
		return SendOptions{}, err
	}
	return SendOptions{
		URL:         "http://" + DefaultHost + ":" + strconv.Itoa(cfg.Port),
		TenantsFile: or(cfg.TenantsFile, filepath.Join(cfg.RunDir, "tenants.json")),
	}, nil
}
