package pretraffic

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// Routes and names the receiver and the processor read (held to
// intake.EventsRoute and queue.AttrEventKey by the tests; this package
// links neither).
const (
	eventsRoute  = "GET /events/{provider}/{tenant}/{key}"
	attrEventKey = "hookwall-event-key"
	// EventType is the type of the processor's check message: no handler
	// serves it, and the processor never gets as far as looking.
	EventType = "hookwall.pretraffic"
)

// signed is one provider's pair of signed checks.
type signed struct {
	provider, tenant string
	good, bad        *signer.Request
	want             webhook.Reply
}

// Check runs every check (see the package documentation) and returns their
// results in order. It never panics: a panic is a failed check.
func (h *Handler) Check(ctx context.Context) (results []Result) {
	defer func() {
		if p := recover(); p != nil {
			results = append(results, Result{Name: "pre-traffic checks", Err: fmt.Errorf("panic: %v", p)})
		}
	}()
	doc, err := h.cfg.LoadTenants(ctx)
	if err != nil {
		return []Result{{Name: "tenants document", Err: err}}
	}
	names := doc.Names()
	if len(names) == 0 {
		return []Result{{Name: "tenants document", Err: errors.New("no tenant")}}
	}
	first, _ := doc.Tenant(names[0])
	if len(first.Providers()) == 0 {
		return []Result{{Name: "tenants document", Err: fmt.Errorf("tenant %q has no provider", first.Name)}}
	}
	p0, t0 := first.Providers()[0], first.Name
	id, err := h.randomID()
	if err != nil {
		return []Result{{Name: "random id", Err: err}}
	}

	plan, errs := h.plan(doc)
	for _, err := range errs {
		results = append(results, Result{Name: "signing", Err: err})
	}
	if len(plan) == 0 && len(errs) == 0 {
		h.cfg.Logger.WarnContext(ctx, "no tenant has a provider with a signed request that writes nothing (LINE, WeCom, WeChat, Slack, Feishu): the signed checks are skipped")
	}
	for _, s := range plan {
		results = append(results,
			Result{Name: fmt.Sprintf("receiver: %s request signed with tenant %s's secret", s.provider, s.tenant),
				Err: h.expectReply(ctx, s.good, s.want)},
			Result{Name: fmt.Sprintf("receiver: %s request signed with another secret is refused", s.provider),
				Err: h.expectRefused(ctx, s.bad)})
	}
	key := webhook.Key(p0, t0, id)
	results = append(results,
		Result{Name: "receiver: events API of an absent key answers 404", Err: h.expectAbsent(ctx, p0, t0, id)},
		Result{Name: "processor: a message of an absent record is acknowledged", Err: h.expectAcknowledged(ctx, p0, t0, key)},
		Result{Name: "receiver: the key is still absent (the processor wrote nothing)", Err: h.expectAbsent(ctx, p0, t0, id)})
	return results
}

// randomID returns a fresh dedup key: "pretraffic-" and 32 hex digits.
func (h *Handler) randomID() (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(h.cfg.Random, b[:]); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return "pretraffic-" + hex.EncodeToString(b[:]), nil
}

// plan returns, per provider, the first tenant (by name) with a signed
// request that writes nothing, the request signed with its secrets and
// with the provider's demo secrets, and the answer the first must get.
func (h *Handler) plan(doc *tenants.Tenants) ([]signed, []error) {
	var out []signed
	var errs []error
	opts := func() signer.Options { return signer.Options{Now: h.cfg.Now(), Random: h.cfg.Random} }
	for _, p := range providers.All() {
		for _, name := range doc.Names() {
			t, _ := doc.Tenant(name)
			if _, ok := t.Settings(p.Name); !ok {
				continue
			}
			good, want, ok := noWrite(t, p, opts())
			if !ok {
				continue
			}
			demo, err := demoTenant(t.Name, p)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s demo settings: %w", p.Name, err))
				break
			}
			bad, _, ok := noWrite(demo, p, opts())
			if !ok {
				errs = append(errs, fmt.Errorf("%s: its demo settings sign no request that writes nothing", p.Name))
				break
			}
			out = append(out, signed{provider: p.Name, tenant: t.Name, good: good, bad: bad, want: want})
			break
		}
	}
	return out, errs
}

// noWrite returns t's request of provider p that the receiver answers
// without writing, and the answer it must give: the URL-verification
// handshake where p has one, else (LINE) a delivery of no event.
func noWrite(t *tenants.Tenant, p *provider.Provider, opts signer.Options) (*signer.Request, webhook.Reply, bool) {
	s, _ := t.Settings(p.Name)
	if _, ok := s.(provider.Handshaker); ok {
		echo, err := randomEcho(opts.Random)
		if err != nil {
			return nil, webhook.Reply{}, false
		}
		r, err := signer.Verification(t, p.Name, echo, opts)
		if err != nil || r.Reply == nil {
			return nil, webhook.Reply{}, false
		}
		return r, *r.Reply, true
	}
	if p.Demo.MultiEvent && p.Demo.Body != nil {
		r, err := signer.Sign(t, p.Name, p.Demo.Body(nil, opts.Now, false), opts)
		if err != nil {
			return nil, webhook.Reply{}, false
		}
		return r, p.Reply, true
	}
	return nil, webhook.Reply{}, false
}

// randomEcho returns a handshake challenge: 24 hex digits.
func randomEcho(random io.Reader) (string, error) {
	var b [12]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// demoTenant returns a tenant named name whose only section is p's
// published demo settings: secrets the real tenant must not have.
func demoTenant(name string, p *provider.Provider) (*tenants.Tenant, error) {
	b, err := json.Marshal(p.Demo.Settings)
	if err != nil {
		return nil, err
	}
	s := p.NewSettings()
	if err := json.Unmarshal(b, s); err != nil {
		return nil, err
	}
	return tenants.NewTenant(name, nil, map[string]provider.Settings{p.Name: s}), nil
}

// gatewayRequest is r as API Gateway's HTTP API delivers it to the
// receiver on the webhook route ([signer.Request.GatewayEvent]).
func gatewayRequest(r *signer.Request, requestID string) events.APIGatewayV2HTTPRequest {
	return r.GatewayEvent(requestID, "hookwall-pretraffic")
}

// answer invokes the receiver with ev and returns its answer.
func (h *Handler) answer(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	var resp events.APIGatewayV2HTTPResponse
	err := h.invoke(ctx, h.cfg.ReceiverVersion, ev, &resp)
	if err == nil && resp.IsBase64Encoded {
		b, derr := base64.StdEncoding.DecodeString(resp.Body)
		if derr != nil {
			return resp, fmt.Errorf("answer body: %w", derr)
		}
		resp.Body = string(b)
	}
	return resp, err
}

// expectReply checks that the receiver answers r with want's status (and
// body, when want has one).
func (h *Handler) expectReply(ctx context.Context, r *signer.Request, want webhook.Reply) error {
	resp, err := h.answer(ctx, gatewayRequest(r, "pretraffic-signed"))
	if err != nil {
		return err
	}
	wantStatus := want.Status
	if wantStatus == 0 {
		wantStatus = http.StatusOK
	}
	if resp.StatusCode != wantStatus {
		return fmt.Errorf("answered %d %q, want %d", resp.StatusCode, clip([]byte(resp.Body), 200), wantStatus)
	}
	if len(want.Body) > 0 && !bytes.Equal([]byte(resp.Body), want.Body) {
		return fmt.Errorf("answered %d with body %q, want %q", resp.StatusCode, clip([]byte(resp.Body), 200), clip(want.Body, 200))
	}
	return nil
}

// expectRefused checks that the receiver answers r with a 4xx.
func (h *Handler) expectRefused(ctx context.Context, r *signer.Request) error {
	resp, err := h.answer(ctx, gatewayRequest(r, "pretraffic-refused"))
	if err != nil {
		return err
	}
	if resp.StatusCode < 400 || resp.StatusCode > 499 {
		return fmt.Errorf("answered %d, want a 4xx (the signature must not verify)", resp.StatusCode)
	}
	return nil
}

// expectAbsent checks that the events API answers 404 for provider#tenant#id.
func (h *Handler) expectAbsent(ctx context.Context, p, t, id string) error {
	path := "/events/" + p + "/" + t + "/" + id
	resp, err := h.answer(ctx, events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       eventsRoute,
		RawPath:        path,
		Headers:        map[string]string{},
		PathParameters: map[string]string{"provider": p, "tenant": t, "key": id},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "pretraffic-events",
			HTTP:      events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodGet, Path: path, UserAgent: "hookwall-pretraffic"},
		},
	})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("answered %d %q, want 404", resp.StatusCode, clip([]byte(resp.Body), 200))
	}
	return nil
}

// expectAcknowledged checks that the processor acknowledges a batch of one
// message of the absent key: no function error, no batch item failure.
func (h *Handler) expectAcknowledged(ctx context.Context, p, t, key string) error {
	now := h.cfg.Now()
	env := webhook.Envelope{Key: key, Provider: p, Tenant: t, Type: EventType, ReceivedAt: now.UTC(), Payload: json.RawMessage(`{}`)}
	body, err := env.MarshalMessage()
	if err != nil {
		return err
	}
	_, _, id, _ := webhook.SplitKey(key)
	ev := events.SQSEvent{Records: []events.SQSMessage{{
		MessageId:     id,
		ReceiptHandle: id,
		Body:          string(body),
		EventSource:   "aws:sqs",
		Attributes: map[string]string{
			"ApproximateReceiveCount": "1",
			"SentTimestamp":           strconv.FormatInt(now.UnixMilli(), 10),
		},
		MessageAttributes: map[string]events.SQSMessageAttribute{
			attrEventKey: {StringValue: &key, DataType: "String"},
		},
	}}}
	var resp events.SQSEventResponse
	if err := h.invoke(ctx, h.cfg.ProcessorVersion, ev, &resp); err != nil {
		return err
	}
	if len(resp.BatchItemFailures) > 0 {
		return fmt.Errorf("the message came back as a batch item failure (the processor could not settle it; its log says why)")
	}
	return nil
}
