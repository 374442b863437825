// Package tenants loads the tenants document: every tenant and its provider
// secrets, from a local file (HOOKWALL_TENANTS_FILE) or a Secrets Manager
// secret (TENANTS_SECRET_ARN), once per cold start. The result is validated
// and immutable; secrets are [Secret] values that never print.
//
// Shape (every provider optional per tenant):
//
//	{"tenants": {"<tenant>": {
//	  "line":     {"channelSecret": "…"},
//	  "wecom":    {"token": "…", "encodingAESKey": "…", "corpId": "…"},
//	  "wechat":   {"token": "…", "appId": "…", "encodingAESKey": "…"},
//	  "standard": {"secrets": ["whsec_…"]},
//	  "forward":  {"url": "https://…", "secret": "whsec_…"}
//	}}}
package tenants
