// Package providers is the list of the providers Hookwall serves: one line
// per provider package, naming its Provider function. Adding a provider is
// its package plus one line here.
//
// Consumers (the receiver, the tenants loader, the signer, audit, the CLI,
// the local runner, the storm) import this package, not the provider
// packages, and iterate [All].
package providers

import (
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/provider/feishu"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
	"github.com/hookwall/hookwall/shared/protocol/provider/slack"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/provider/wechat"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
)

// list is every provider Hookwall serves.
var list = provider.NewList(
	feishu.Provider(),
	line.Provider(),
	slack.Provider(),
	standard.Provider(),
	wechat.Provider(),
	wecom.Provider(),
)

// All returns every provider, sorted by name.
func All() []*provider.Provider { return list.All() }

// Names returns every provider's route name, sorted.
func Names() []string { return list.Names() }

// Lookup returns the provider whose route name is name.
func Lookup(name string) (*provider.Provider, bool) { return list.Lookup(name) }
