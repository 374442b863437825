// Package provider is what Hookwall needs to know of one webhook platform,
// as one [Provider] value its package builds with [New].
//
// A provider is one package under shared/protocol/provider (line, wecom, wechat,
// standard, slack, ...) whose Provider function returns it, plus one line
// naming that function in the list of shared/protocol/providers (a [List]), as team
// handlers are one line in the processor's list. Every consumer iterates
// the list, never a switch of its own:
//
//   - the receiver (shared/engine/intake) builds one [webhook.Parser] per tenant
//     and provider from [Settings.Parser];
//   - the tenants loader (shared/config/tenants) reads each tenant's section of the
//     tenants document into [Provider.NewSettings] and validates it with
//     [Settings.Validate];
//   - the signer (shared/config/signer, `hookwall sign`, the local runner, the
//     storm and tests) signs with [Settings.Sign] and, where the platform
//     has one, builds the URL-verification handshake with [Handshaker];
//   - the audit view and the CLI check route names against [Names];
//   - `make run` and hookwall-storm send the made-up events of [Demo].
//
// Consumers import shared/protocol/providers (which links every provider in) and
// read the list through it.
package provider
