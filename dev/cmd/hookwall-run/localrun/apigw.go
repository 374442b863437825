package localrun

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// APIGatewayHandler is the receiver Lambda's handler (intake.Handler.HandleAPIGateway).
type APIGatewayHandler func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Route is the receiver's route, as the template declares it.
const Route = "/webhooks/{provider}/{tenant}"

// maxAPIGatewayBody is API Gateway's payload limit (10 MB), the bound
// when no MaxBody is set.
const maxAPIGatewayBody = 10 << 20

// APIGateway stands in for an API Gateway HTTP API in front of the receiver
// Lambda: it turns each request into the payload format 2.0 event the Lambda
// receives (lower-case headers, repeated ones joined with commas, the raw
// query string, path parameters, a request id and an X-Ray trace header, the
// body base64-encoded when it is not UTF-8 text), invokes the handler under
// the function's timeout, and writes the response.
type APIGateway struct {
	// Handle is the Lambda handler (required).
	Handle APIGatewayHandler
	// Timeout is the function's timeout (default 4 s, as template.yaml).
	Timeout time.Duration
	// Log receives the received and answered lines (required).
	Log *slog.Logger
	// MaxBody is the largest body passed on: the receiver's own limit
	// (settings.Receiver.MaxBody, HOOKWALL_MAX_BODY_BYTES). A larger body
	// is answered 413 as the receiver answers it, without being read
	// further (default: API Gateway's 10 MB).
	MaxBody int64
	// RouteKey is the route's key in the event (default "ANY " + [Route];
	// intake.EventsRoute for the events API); Params names its path
	// parameters (default provider and tenant).
	RouteKey string
	Params   []string
}

// webhookRoute reports whether a serves the webhook route, whose requests
// are steps of an event's path (logged as received and answered).
func (a *APIGateway) webhookRoute() bool { return a.RouteKey == "" }

// tooLarge answers a body over MaxBody as the receiver answers one
// (413, "Request Entity Too Large").
func (a *APIGateway) tooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	a.Log.LogAttrs(r.Context(), slog.LevelWarn, StageRejected, slog.String(AttrStage, StageRejected),
		slog.String("provider", r.PathValue("provider")), slog.String("tenant", r.PathValue("tenant")),
		slog.Int("status", http.StatusRequestEntityTooLarge), slog.Int64("max_body_bytes", limit),
		slog.String(AttrDetail, fmt.Sprintf("%s %s: body over the receiver's limit of %d bytes (HOOKWALL_MAX_BODY_BYTES): 413, not read further",
			r.Method, r.URL.Path, limit)))
	w.Header().Set("Connection", "close")
	http.Error(w, http.StatusText(http.StatusRequestEntityTooLarge), http.StatusRequestEntityTooLarge)
}

// ServeHTTP serves one request of the receiver route through the Lambda handler.
func (a *APIGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	limit := a.MaxBody
	if limit <= 0 || limit > maxAPIGatewayBody {
		limit = maxAPIGatewayBody
	}
	if r.ContentLength > limit { // declared too large: refused before reading
		a.tooLarge(w, r, limit)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) { // streamed too large: cut at the limit
			a.tooLarge(w, r, limit)
			return
		}
		http.Error(w, `{"message":"Bad Request"}`, http.StatusBadRequest)
		return
	}
	ev := a.Event(r, body, start)
	level := slog.LevelInfo
	if !a.webhookRoute() {
		level = slog.LevelDebug
	}
	a.Log.LogAttrs(r.Context(), level, StageReceived, slog.String(AttrStage, StageReceived),
		slog.String("provider", r.PathValue("provider")), slog.String("tenant", r.PathValue("tenant")),
		slog.String("request_id", ev.RequestContext.RequestID), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.Int("bytes", len(body)),
		slog.String(AttrDetail, fmt.Sprintf("%s %s (%d bytes)", r.Method, r.URL.Path, len(body))))
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 4 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	resp, err := a.Handle(ctx, ev)
	if err != nil { // the receiver never fails; API Gateway would answer 500
		a.Log.ErrorContext(r.Context(), "receiver invocation failed", slog.Any("error", err))
		http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
		return
	}
	out := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if out, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
			return
		}
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := resp.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Apigw-Requestid", ev.RequestContext.RequestID)
	w.WriteHeader(status)
	_, _ = w.Write(out)
	a.Log.LogAttrs(r.Context(), level, StageAnswered, slog.String(AttrStage, StageAnswered),
		slog.String("provider", r.PathValue("provider")), slog.String("tenant", r.PathValue("tenant")),
		slog.String("request_id", ev.RequestContext.RequestID), slog.Int("status", status),
		slog.Duration("took", time.Since(start)),
		slog.String(AttrDetail, fmt.Sprintf("%d %s in %s", status, http.StatusText(status), time.Since(start).Round(time.Millisecond))))
}

// Event builds the API Gateway HTTP API (payload 2.0) event of r.
func (a *APIGateway) Event(r *http.Request, body []byte, at time.Time) events.APIGatewayV2HTTPRequest {
	headers := make(map[string]string, len(r.Header)+2)
	for k, vs := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	if r.Host != "" {
		headers["host"] = r.Host
	}
	reqID := newRequestID()
	if headers["x-amzn-trace-id"] == "" {
		headers["x-amzn-trace-id"] = newTraceHeader(at)
	}
	var query map[string]string
	if q := r.URL.Query(); len(q) > 0 {
		query = make(map[string]string, len(q))
		for k, vs := range q {
			query[k] = strings.Join(vs, ",")
		}
	}
	var cookies []string
	for _, c := range r.Cookies() {
		cookies = append(cookies, c.String())
	}
	delete(headers, "cookie")
	sourceIP, _, _ := net.SplitHostPort(r.RemoteAddr)
	routeKey, names := a.RouteKey, a.Params
	if routeKey == "" {
		routeKey = "ANY " + Route
	}
	if len(names) == 0 {
		names = []string{"provider", "tenant"}
	}
	params := make(map[string]string, len(names))
	for _, n := range names {
		params[n] = r.PathValue(n) // percent-decoded, as HTTP APIs deliver them
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              routeKey,
		RawPath:               r.URL.EscapedPath(),
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     routeKey,
			AccountID:    "000000000000",
			Stage:        "$default",
			RequestID:    reqID,
			APIID:        "local",
			DomainName:   r.Host,
			DomainPrefix: "local",
			Time:         at.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    at.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: sourceIP, UserAgent: r.UserAgent(),
			},
		},
	}
	if utf8.Valid(body) {
		ev.Body = string(body)
	} else {
		ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	return ev
}

// newRequestID returns an id shaped like API Gateway's ("Ab1cDEfGhIjKlM=").
func newRequestID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:]) + "="
}

// newTraceHeader returns an X-Ray trace header for a request at t.
func newTraceHeader(t time.Time) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("Root=1-%08x-%s", t.Unix(), hex.EncodeToString(b[:]))
}
