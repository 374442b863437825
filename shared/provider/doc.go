// Package provider is the provider registry: what Hookwall needs to know of
// one webhook platform, as one [Provider] value its package registers.
//
// A provider is one package under shared/provider (line, wecom, wechat,
// standard, slack, ...) that calls [Register] from an init function, plus
// one blank import of it in the list package shared/providers. Every
// consumer iterates the registry, never a switch of its own:
//
//   - the receiver (shared/intake) builds one [webhook.Parser] per tenant
//     and provider from [Settings.Parser];
//   - the tenants loader (shared/tenants) reads each tenant's section of the
//     tenants document into [Provider.NewSettings] and validates it with
//     [Settings.Validate];
//   - the signer (shared/signer, `hookwall sign`, the local runner, the
//     storm and tests) signs with [Settings.Sign] and, where the platform
//     has one, builds the URL-verification handshake with [Handshaker];
//   - the audit view and the CLI check route names against [Names];
//   - `make run` and hookwall-storm send the made-up events of [Demo].
//
// Consumers import shared/providers (which links every provider in) and
// read the registry through it.
package provider
