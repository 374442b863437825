// Package providers is the list of the providers Hookwall serves: one
// blank import per provider package, each of which registers itself with
// package provider. Adding a provider is its package plus one line here.
//
// Consumers (the receiver, the tenants loader, the signer, audit, the CLI,
// the local runner, the storm) import this package, not the provider
// packages, and iterate [All].
package providers

import (
	"github.com/hookwall/hookwall/shared/provider"

	_ "github.com/hookwall/hookwall/shared/provider/feishu"
	_ "github.com/hookwall/hookwall/shared/provider/line"
	_ "github.com/hookwall/hookwall/shared/provider/slack"
	_ "github.com/hookwall/hookwall/shared/provider/standard"
	_ "github.com/hookwall/hookwall/shared/provider/wechat"
	_ "github.com/hookwall/hookwall/shared/provider/wecom"
)

// All returns every provider, sorted by name.
func All() []*provider.Provider { return provider.All() }

// Names returns every provider's route name, sorted.
func Names() []string { return provider.Names() }

// Lookup returns the provider whose route name is name.
func Lookup(name string) (*provider.Provider, bool) { return provider.Lookup(name) }
