// Package tenants loads the tenants document: every tenant and its provider
// secrets, from a local file (HOOKWALL_TENANTS_FILE) or a Secrets Manager
// secret (TENANTS_SECRET_ARN), once per cold start. The result is validated
// and immutable; secrets are [Secret] values that never print.
//
// Each tenant holds one section per provider it uses, keyed by the
// provider's route name, plus "forward". The providers are those of the
// registry (package providers): each section decodes into the provider's
// settings type (unknown fields refused) and is validated by it, so a new
// provider adds its section with no change here. Today's shape:
//
//	{"tenants": {"<tenant>": {
//	  "line":     {"channelSecret": "…"},
//	  "wecom":    {"token": "…", "encodingAESKey": "…", "corpId": "…"},
//	  "wechat":   {"token": "…", "appId": "…", "encodingAESKey": "…"},
//	  "standard": {"secrets": ["whsec_…"]},
//	  "forward":  {"url": "https://…", "secret": "whsec_…"}
//	}}}
//
// Every provider is optional per tenant, but a tenant needs one.
package tenants
