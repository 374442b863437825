package intake

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// HandleAPIGateway serves an API Gateway HTTP API (payload format 2.0)
// request for the route /webhooks/{provider}/{tenant}, or for [EventsRoute]
// when Config.Events is set. It never returns an error: every failure is an
// HTTP status, so that API Gateway answers it.
func (h *Handler) HandleAPIGateway(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	defer func() { _ = h.cfg.Metrics.Flush() }()
	if e.RouteKey == EventsRoute {
		if h.cfg.Events == nil {
			reply := jsonError(http.StatusNotFound, "the events API is not configured")
			return events.APIGatewayV2HTTPResponse{StatusCode: reply.Status, Body: string(reply.Body),
				Headers: map[string]string{"Content-Type": reply.ContentType}}, nil
		}
		return h.handleEventsAPIGateway(ctx, e), nil
	}
	meta := Meta{RequestID: e.RequestContext.RequestID, TraceID: e.Headers["x-amzn-trace-id"]}
	req, err := requestFromAPIGateway(e, h.cfg.MaxBody)
	var reply webhook.Reply
	if err != nil {
		reply = h.errorReply(ctx, err)
	} else {
		reply = h.Receive(ctx, req, meta)
	}
	resp := events.APIGatewayV2HTTPResponse{
		StatusCode: reply.Status,
		Headers:    map[string]string{},
		Body:       string(reply.Body),
	}
	if resp.StatusCode == 0 {
		resp.StatusCode = http.StatusOK
	}
	if reply.ContentType != "" {
		resp.Headers["Content-Type"] = reply.ContentType
	}
	return resp, nil
}

// requestFromAPIGateway turns a payload 2.0 event into a Request. The query
// is parsed from RawQueryString (percent-decoding, so WeCom's %2B stays '+').
func requestFromAPIGateway(e events.APIGatewayV2HTTPRequest, maxBody int64) (*webhook.Request, error) {
	provider, tenant := e.PathParameters["provider"], e.PathParameters["tenant"]
	if provider == "" || tenant == "" {
		provider, tenant = splitRoute(e.RawPath)
	}
	method := e.RequestContext.HTTP.Method
	body := []byte(e.Body)
	if e.IsBase64Encoded {
		if int64(base64.StdEncoding.DecodedLen(len(e.Body))) > maxBody+2 {
			return nil, fmt.Errorf("intake: %w", webhook.ErrTooLarge)
		}
		b, err := base64.StdEncoding.DecodeString(e.Body)
		if err != nil {
			return nil, fmt.Errorf("intake: base64 body: %w", webhook.ErrMalformed)
		}
		body = b
	}
	query, err := url.ParseQuery(e.RawQueryString)
	if err != nil {
		return nil, fmt.Errorf("intake: query string: %w", webhook.ErrMalformed)
	}
	header := make(http.Header, len(e.Headers))
	for k, v := range e.Headers {
		header.Set(k, v)
	}
	return &webhook.Request{
		Method: method, Provider: provider, Tenant: tenant,
		Query: query, Header: header, Body: body,
	}, nil
}

// splitRoute extracts {provider} and {tenant} from /webhooks/{provider}/{tenant}
// (with or without a stage prefix).
func splitRoute(path string) (provider, tenant string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "webhooks" && i+3 == len(parts) {
			p, _ := url.PathUnescape(parts[i+1])
			t, _ := url.PathUnescape(parts[i+2])
			return p, t
		}
	}
	return "", ""
}
