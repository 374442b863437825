package localrun

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// Command is a printed command to send a demo event.
type Command struct {
	Label, Provider, Line string
}

// sendCommands returns the ready-to-paste commands that send one signed demo
// event per provider of the registry: the same command twice sends the same
// event, so the second is a duplicate.
func sendCommands(sys System, cfg Config, b banner) []Command {
	exe := sys.Executable
	// Flags only where a fresh shell's defaults differ (another port or run
	// directory): the command works from any directory.
	var extra string
	if def, err := sendDefaults(func(string) string { return "" }, sys.WorkDir, sys.Executable); err != nil ||
		def.URL != b.base || def.TenantsFile != b.tenants {
		extra = " -url " + b.base + " -tenants " + shellWord(b.tenants)
	}
	at := strconv.FormatInt(time.Now().Unix(), 10)
	var cmds []Command
	for _, p := range providers.All() {
		cmds = append(cmds, Command{Label: p.Label, Provider: p.Name,
			Line: shellWord(exe) + " send " + p.Name + " -id " + shellWord(NewDemoID(p.Name)) + " -at " + at + extra})
	}
	return cmds
}

// SendProviders returns the providers [Send] has a demo event for: every
// provider of the registry.
func SendProviders() []string { return providers.Names() }

// NewDemoID returns a fresh event id of provider's kind (its demo's ID
// with a random tag): a LINE webhookEventId, a WeCom or WeChat numeric
// MsgId, a Standard Webhooks webhook-id, and so on. It returns "" for an
// unknown provider.
func NewDemoID(provider string) string {
	p, ok := providers.Lookup(provider)
	if !ok {
		return ""
	}
	n, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	return p.Demo.ID(strings.ToLower(rand.Text()[:8]), n.Uint64())
}

// DemoBody returns the body of provider's demo event with event id id at
// time at (its demo's Body: a LINE text message, a WeCom text message, a
// Standard Webhooks order.paid, ...). The same id and time give the same
// body, so sending it again is a duplicate.
func DemoBody(provider, id string, at time.Time) ([]byte, error) {
	p, ok := providers.Lookup(provider)
	if !ok {
		return nil, fmt.Errorf("localrun: no demo event for provider %q (want one of %s)", provider, strings.Join(SendProviders(), ", "))
	}
	return p.Demo.Body([]string{id}, at, false), nil
}

// SendOptions say which demo event [Send] sends where.
type SendOptions struct {
	// Provider is the provider's route name (one of [SendProviders]).
	Provider string
	// ID is the event id (empty: a new one, so a new event).
	ID string
	// At is the event's own time (zero: now).
	At time.Time
	// URL is the receiver's base URL (default http://127.0.0.1:3000).
	URL string
	// TenantsFile is the tenants document to sign with; Tenant the tenant.
	TenantsFile, Tenant string
}

// Send signs the demo event o describes with the tenant's secrets (package
// shared/config/signer: as the platform would, at this moment) and POSTs it to the
// receiver. It writes the request line and the answer to out, and fails
// unless the answer is 2xx.
func Send(ctx context.Context, o SendOptions, out io.Writer) error {
	if o.ID == "" {
		o.ID = NewDemoID(o.Provider)
	}
	if o.At.IsZero() {
		o.At = time.Now()
	}
	body, err := DemoBody(o.Provider, o.ID, o.At)
	if err != nil {
		return err
	}
	doc, err := tenants.LoadFile(o.TenantsFile)
	if err != nil {
		return fmt.Errorf("localrun: send: %w", err)
	}
	t, ok := doc.Tenant(o.Tenant)
	if !ok {
		return fmt.Errorf("localrun: send: no tenant %q in %s", o.Tenant, o.TenantsFile)
	}
	// The id is the event's, whether in the body or, for Standard
	// Webhooks, the webhook-id header.
	sreq, err := signer.Sign(t, o.Provider, body, signer.Options{MessageID: o.ID})
	if err != nil {
		return fmt.Errorf("localrun: send: %w", err)
	}
	req, err := sreq.HTTPRequest(ctx, o.URL)
	if err != nil {
		return fmt.Errorf("localrun: send: %w", err)
	}
	fmt.Fprintf(out, "→ %s %s (%s event %s, signed now with tenant %q of %s)\n", req.Method, req.URL.Redacted(),
		o.Provider, o.ID, o.Tenant, o.TenantsFile)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("localrun: send: %w (is the runner up? make run)", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(out, "← %s %s\n", resp.Status, strings.TrimSpace(string(answer)))
	if resp.StatusCode == http.StatusServiceUnavailable {
		return fmt.Errorf("localrun: send: the receiver answered %s: the platform would retry later. "+
			"If you sent this event a moment ago, it is still being handed off (HOOKWALL_REENQUEUE_GRACE): send it again in a few seconds", resp.Status)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("localrun: send: the receiver answered %s", resp.Status)
	}
	return nil
}

// UsageError is a command line that cannot be run: the command exits 2
// (as flag's own errors do), after its usage text.
type UsageError struct{ Msg string }

// Error returns the message.
func (e *UsageError) Error() string { return e.Msg }

// sendUsage is "hookwall-run send"'s help.
func sendUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: hookwall-run send <provider> [flags]\n\n"+
		"Signs a demo event with the tenant's secrets, as the platform would now, and sends it to the\n"+
		"receiver of `make run` (found through its %s; -url to name another).\n"+
		"Without -id, each send is a new event; it prints the command that sends the same event again\n"+
		"(the same -id and -at): a duplicate, answered but not processed again.\n\n"+
		"Providers: %s\n\nFlags:\n", DiscoveryFile, strings.Join(SendProviders(), ", "))
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// SendCommand runs "hookwall-run send <provider> [flags]" with args (the
// words after "send"). Defaults: the URL and tenants file of the runner
// found in the run directory's runner.json, else the ones a runner with the
// same environment uses. -h writes the help to out and returns
// flag.ErrHelp; a bad command line writes the help to errOut and returns a
// [*UsageError].
func SendCommand(ctx context.Context, args []string, getenv func(string) string, wd, exe string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("hookwall-run send", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o SendOptions
	var at int64
	fs.StringVar(&o.ID, "id", "", "event id in the platform's format (LINE webhookEventId, WeCom/WeChat MsgId, Standard webhook-id, ...); empty: a new event")
	fs.Int64Var(&at, "at", 0, "the event's time, unix seconds; 0: now")
	fs.StringVar(&o.URL, "url", "", "the receiver's base URL (default: the running runner's, from its "+DiscoveryFile+"; else http://127.0.0.1:$PORT)")
	fs.StringVar(&o.TenantsFile, "tenants", "", "tenants document (default: the running runner's; else $HOOKWALL_TENANTS_FILE, else .local/run/tenants.json)")
	fs.StringVar(&o.Tenant, "tenant", DefaultTenant, "tenant")
	usage := func(format string, a ...any) error {
		msg := fmt.Sprintf(format, a...)
		fmt.Fprintf(errOut, "hookwall-run send: %s\n\n", msg)
		sendUsage(errOut, fs)
		return &UsageError{Msg: "send: " + msg}
	}
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			sendUsage(out, fs)
			return flag.ErrHelp
		}
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usage("name a provider first (one of %s)", strings.Join(SendProviders(), ", "))
	}
	o.Provider = args[0]
	if !slices.Contains(SendProviders(), o.Provider) {
		return usage("no demo event for provider %q: want one of %s", o.Provider, strings.Join(SendProviders(), ", "))
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			sendUsage(out, fs)
			return flag.ErrHelp
		}
		return usage("%v", err)
	}
	if fs.NArg() > 0 {
		return usage("unexpected arguments %q", fs.Args())
	}
	if at != 0 {
		o.At = time.Unix(at, 0)
	}
	def, err := sendDefaults(getenv, wd, exe)
	if err != nil && (o.URL == "" || o.TenantsFile == "") {
		return err
	}
	if o.URL == "" {
		o.URL = def.URL
	}
	if o.TenantsFile == "" {
		o.TenantsFile = def.TenantsFile
	}
	newEvent := o.ID == ""
	if newEvent {
		o.ID = NewDemoID(o.Provider)
	}
	if o.At.IsZero() {
		o.At = time.Now().Truncate(time.Second)
	}
	if err := Send(ctx, o, out); err != nil {
		return err
	}
	if newEvent {
		again := []string{shellWord(displayExe(exe, wd)), "send", o.Provider, "-id", shellWord(o.ID), "-at", strconv.FormatInt(o.At.Unix(), 10)}
		for _, f := range []struct{ name, v, def string }{{"-url", o.URL, def.URL}, {"-tenants", o.TenantsFile, def.TenantsFile}, {"-tenant", o.Tenant, DefaultTenant}} {
			if f.v != f.def {
				again = append(again, f.name, shellWord(f.v))
			}
		}
		fmt.Fprintf(out, "  the same event again (a duplicate: answered, not processed again):\n  %s\n", strings.Join(again, " "))
	}
	return nil
}

// displayExe is how the printed commands name the runner's binary: relative
// to the working directory when it is inside it (.local/bin/hookwall-run).
func displayExe(exe, wd string) string {
	if exe == "" {
		return "hookwall-run"
	}
	if r := ShortPath(wd, exe); r != exe {
		if !strings.Contains(r, "/") {
			r = "./" + r
		}
		return r
	}
	return exe
}

// sendDefaults are the URL and tenants file a send uses without flags: the
// root is found from the working directory, else from the binary's place
// (<root>/.local/bin/hookwall-run), so the printed commands work anywhere.
func sendDefaults(getenv func(string) string, wd, exe string) (SendOptions, error) {
	cfg, err := LoadConfig(getenv, wd)
	if err != nil && exe != "" && getenv("HOOKWALL_ROOT") == "" {
		if root, rerr := FindRoot(filepath.Dir(exe)); rerr == nil {
			cfg, err = LoadConfig(func(k string) string {
				if k == "HOOKWALL_ROOT" {
					return root
				}
				return getenv(k)
			}, wd)
		}
	}
	if err != nil {
		return SendOptions{}, err
	}
	if d, ok := readDiscovery(cfg.RunDir); ok { // a runner is up: its URL and tenants
		return SendOptions{URL: d.URL, TenantsFile: or(d.TenantsFile, filepath.Join(cfg.RunDir, "tenants.json"))}, nil
	}
	return SendOptions{
		URL:         "http://" + DefaultHost + ":" + strconv.Itoa(cfg.Port),
		TenantsFile: or(cfg.TenantsFile, filepath.Join(cfg.RunDir, "tenants.json")),
	}, nil
}
