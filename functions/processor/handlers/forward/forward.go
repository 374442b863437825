package forward

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
)

// HandlerName is the forwarding handler's stable name.
const HandlerName = "hookwall.forward"

// StepName is the name of the step that POSTs the envelope.
const StepName = "post"

// DefaultTimeout bounds one POST.
const DefaultTimeout = 10 * time.Second

// Tenants looks tenants up by name; *tenants.Tenants satisfies it.
type Tenants interface {
	Tenant(name string) (*tenants.Tenant, bool)
}

// config configures the forwarding handler.
type config struct {
	// Tenants is the tenants document (nil: no tenant forwards).
	Tenants Tenants
	// Timeout bounds one POST, answer included (default [DefaultTimeout]).
	Timeout time.Duration
	// Now is the clock of webhook-timestamp (default time.Now).
	Now func() time.Time
}

// Team is the built-in forwarder, listed last by
// functions/processor/handlers. It declares no setting: a tenant's forward
// is in the tenants document.
var Team = platform.Team{Owner: "functions/processor/handlers/forward", Register: Register}

// Register adds the forwarding handler to r, for every event type of the
// tenants that have forward configured in the tenants document the
// platform gives (d.Tenants; nil: no tenant forwards).
func Register(r *process.Registry, d platform.Deps) {
	var cfg config
	if d.Tenants != nil { // a nil *tenants.Tenants in the interface would not be nil
		cfg.Tenants = d.Tenants
	}
	register(r, cfg)
}

// TargetPattern names the forward handler's targets: one per tenant, so
// that one tenant's unreachable URL opens that tenant's circuit breaker
// only (process.Target).
const TargetPattern = "forward/{tenant}"

func register(r *process.Registry, cfg config) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	f := &forwarder{cfg: cfg}
	process.HandleAll(r, HandlerName, f.forward, process.ForTenants(func(tenant string) bool {
		return f.target(tenant) != nil
	}), process.Target(TargetPattern))
}

type forwarder struct {
	cfg config
}

// target returns the tenant's forward settings, or nil.
func (f *forwarder) target(tenant string) *tenants.Forward {
	if f.cfg.Tenants == nil {
		return nil
	}
	t, ok := f.cfg.Tenants.Tenant(tenant)
	if !ok || t.Forward == nil || t.Forward.URL == "" {
		return nil
	}
	return t.Forward
}

// forward POSTs the envelope in one step; it does nothing for a tenant
// without forward (it is not matched for one anyway).
func (f *forwarder) forward(ctx context.Context, ev *process.Event[webhook.Envelope]) error {
	fw := f.target(ev.Tenant)
	if fw == nil {
		return nil
	}
	body, err := ev.Data.MarshalMessage() // the envelope's JSON, '<', '>' and '&' unescaped
	if err != nil {
		return process.Permanent(fmt.Errorf("forward: encode envelope: %w", err))
	}
	return ev.Step(ctx, StepName, func(ctx context.Context, idemKey string) error {
		return f.send(ctx, ev.HTTPClient(), fw, idemKey, body)
	})
}

// send POSTs body to fw.URL with id as Idempotency-Key and webhook-id,
// signed with fw.Secret if set, and maps the answer to an outcome. Errors
// never contain the URL (it may carry a token) nor the body.
func (f *forwarder) send(ctx context.Context, hc *http.Client, fw *tenants.Forward, id string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fw.URL, bytes.NewReader(body))
	if err != nil {
		return process.Permanent(errors.New("forward: invalid forward.url"))
	}
	ts := f.cfg.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(process.HeaderIdempotencyKey, id)
	req.Header.Set(standard.IDHeader, id)
	req.Header.Set(standard.TimestampHeader, strconv.FormatInt(ts, 10))
	if fw.Secret != "" {
		sig, err := standard.Sign(fw.Secret.Reveal(), id, ts, body)
		if err != nil {
			return process.Permanent(fmt.Errorf("forward: sign: %w", err))
		}
		req.Header.Set(standard.SignatureHeader, sig)
	}
	client := *hc
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // *url.Error quotes the URL
		}
		return fmt.Errorf("forward: POST: %w", err) // transport error or timeout: retried
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if err := process.HTTPStatus(resp.StatusCode); err != nil {
		return fmt.Errorf("forward: POST: %w", err)
	}
	return nil
}
