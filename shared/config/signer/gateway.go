package signer

import (
	"encoding/base64"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// Route is the receiver's webhook route, as template.yaml declares it.
const Route = "/webhooks/{provider}/{tenant}"

// GatewayEvent returns r as API Gateway's HTTP API (payload format 2.0)
// delivers it to the receiver Lambda on [Route]: lower-case headers (a
// repeated one joined with commas), the query, the path parameters, the
// body base64-encoded, requestID and userAgent in the request context.
// The pre-traffic hook and the skew test (cmd/hookwall-upgrade) invoke the
// receiver with it.
func (r *Request) GatewayEvent(requestID, userAgent string) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	query := map[string]string{}
	for k, v := range r.Query {
		query[k] = strings.Join(v, ",")
	}
	return events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              r.Method + " " + Route,
		RawPath:               r.Path(),
		RawQueryString:        r.Query.Encode(),
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        map[string]string{"provider": r.Provider, "tenant": r.Tenant},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: requestID,
			HTTP:      events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: r.Path(), UserAgent: userAgent},
		},
		Body:            base64.StdEncoding.EncodeToString(r.Body),
		IsBase64Encoded: true,
	}
}
