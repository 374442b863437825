package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// defaultBase is where `make run` serves the receiver.
const defaultBase = "http://127.0.0.1:3000"

// maxReply bounds the reply body sign --send reads.
const maxReply = 1 << 20

// sign builds a signed request and prints it as curl, or sends it with --send.
func (a *app) sign(ctx context.Context, args []string) error { return a.signOrSend(ctx, "sign", args) }

// send builds a signed request and sends it to the receiver.
func (a *app) send(ctx context.Context, args []string) error { return a.signOrSend(ctx, "send", args) }

// signOrSend runs `sign` or `send` (cmd): the same request, printed or sent.
// The receiver URL and the tenants document default to the local runner's
// when one runs; flags and the environment win.
func (a *app) signOrSend(ctx context.Context, cmd string, args []string) error {
	fs := a.flagSet(cmd)
	tenant := fs.String("tenant", "", "the tenant whose secrets sign the request (required)")
	bodyFile := fs.String("body", "", `the body the platform means: its JSON, or the message XML (wecom, wechat), see --help; "-" reads stdin`)
	mode := fs.String("mode", "", strings.Join(signer.ModeProviders(), ", ")+" only: the signing mode (wechat: safe, the default with an encodingAESKey; compat; or plain, the default without)")
	send := new(string)
	if cmd == "sign" {
		fs.StringVar(send, "send", "", "POST (or GET) the request to this receiver URL and print the reply, instead of printing curl")
	}
	base := fs.String("url", "", "the receiver's base URL (default: the running local runner's (make run), else "+defaultBase+")")
	verify := fs.String("verify", "", strings.Join(signer.HandshakeProviders(), ", ")+": build the URL-verification handshake with this challenge (echostr) instead of a POST")
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	var p *provider.Provider
	if len(pos) == 1 {
		p, _ = providers.Lookup(pos[0])
	}
	switch {
	case len(pos) != 1:
		return usagef(cmd, "want one provider (%s), got %d arguments", strings.Join(signer.Providers(), ", "), len(pos))
	case p == nil:
		return usagef(cmd, "unknown provider %q: want one of %s", pos[0], strings.Join(signer.Providers(), ", "))
	case *tenant == "":
		return usagef(cmd, "--tenant is required")
	case *verify == "" && *bodyFile == "":
		return usagef(cmd, "--body is required (or --verify ECHOSTR for a %s URL verification)", strings.Join(signer.HandshakeProviders(), "/"))
	case *verify != "" && *bodyFile != "":
		return usagef(cmd, "--verify builds the handshake, whose body is the platform's: drop --body")
	case *mode != "" && len(p.Modes) == 0:
		return usagef(cmd, "--mode applies to %s only", strings.Join(signer.ModeProviders(), ", "))
	case *mode != "" && !slices.Contains(p.Modes, *mode):
		return usagef(cmd, "--mode %q: want %s", *mode, orList(p.Modes))
	}
	provider := pos[0]
	s, err := a.settings(settings.CLINeeds{Tenants: true})
	if err != nil {
		return err
	}
	doc, err := a.tenants(ctx, s)
	if err != nil {
		return err
	}
	tn, ok := doc.Tenant(*tenant)
	if !ok {
		return refusedf("unknown tenant %q in %s (tenants: %s)", *tenant, tenantsSource(s), strings.Join(doc.Names(), ", "))
	}
	opts := signer.Options{Mode: *mode, Now: a.now()}
	var req *signer.Request
	if *verify != "" {
		req, err = signer.Verification(tn, provider, *verify, opts)
	} else {
		var body []byte
		if body, err = a.readBody(cmd, *bodyFile); err != nil {
			return err
		}
		if body, err = signer.Expand(body, opts.Now, nil); err != nil {
			return err
		}
		req, err = signer.Sign(tn, provider, body, opts)
	}
	switch {
	case errors.Is(err, signer.ErrBadBody):
		return usagef(cmd, "--body %s: %s", *bodyFile, signerMessage(err, signer.ErrBadBody))
	case errors.Is(err, signer.ErrNotConfigured):
		return refusedf("%s (%s)", signerMessage(err, signer.ErrNotConfigured), tenantsSource(s))
	case err != nil:
		return err
	}
	if *send != "" {
		return a.sendSigned(ctx, cmd, "--send", req, *send)
	}
	flagName := "--url"
	if *base == "" {
		*base, flagName = a.runnerURL(defaultBase), "the receiver URL"
	}
	if cmd == "send" {
		return a.sendSigned(ctx, cmd, flagName, req, *base)
	}
	curl, err := req.Curl(*base)
	if err != nil {
		return usagef(cmd, "%s: %v", flagName, strings.TrimPrefix(err.Error(), "signer: "))
	}
	if a.json {
		target, _ := req.URL(*base)
		return a.writeJSON(signedJSON(req, target))
	}
	fmt.Fprintln(a.stdout, curl)
	return nil
}

// orList writes words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// signerMessage is err's text without the package prefix and the sentinel's.
func signerMessage(err, sentinel error) string {
	return strings.TrimSuffix(strings.TrimPrefix(err.Error(), "signer: "), ": "+sentinel.Error())
}

// signedJSON is a signed request, in JSON.
func signedJSON(req *signer.Request, target string) any {
	headers := map[string]string{}
	for k, v := range req.Header {
		headers[k] = strings.Join(v, ", ")
	}
	return struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}{req.Method, target, headers, string(req.Body)}
}

// readBody reads the --body file ("-": stdin) for cmd.
func (a *app) readBody(cmd, name string) ([]byte, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(io.LimitReader(os.Stdin, 16<<20))
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, usagef(cmd, "--body: %v", err)
	}
	return b, nil
}

// tenants loads the tenants document the functions use.
func (a *app) tenants(ctx context.Context, s settings.CLI) (*tenants.Tenants, error) {
	src := tenants.Source{File: s.TenantsFile, SecretARN: s.TenantsSecretARN}
	if s.TenantsSecretARN != "" {
		b, err := a.open(ctx, s)
		if err != nil {
			return nil, err
		}
		src.Secrets = b.secrets
	}
	doc, err := tenants.Load(ctx, src)
	if err != nil {
		return nil, &configError{problems: []string{fmt.Sprintf("%s: %v", tenantsSource(s), err)}}
	}
	return doc, nil
}

func tenantsSource(s settings.CLI) string {
	if s.TenantsFile != "" {
		return "HOOKWALL_TENANTS_FILE=" + s.TenantsFile
	}
	return "TENANTS_SECRET_ARN=" + s.TenantsSecretARN
}

// sendSigned sends req to the receiver at target and prints the reply; a
// reply other than 2xx fails the command. cmd is the command running, and
// flagName names where target came from, for the error of a bad URL.
func (a *app) sendSigned(ctx context.Context, cmd, flagName string, req *signer.Request, target string) error {
	hr, err := req.HTTPRequest(ctx, target)
	if err != nil {
		return usagef(cmd, "%s: %v", flagName, strings.TrimPrefix(err.Error(), "signer: "))
	}
	resp, err := a.http.Do(hr)
	if err != nil {
		return fmt.Errorf("send to %s: %w", hr.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return fmt.Errorf("read the reply of %s: %w", hr.URL.Redacted(), err)
	}
	if a.json {
		if err := a.writeJSON(struct {
			URL    string `json:"url"`
			Status int    `json:"status"`
			Body   string `json:"body"`
		}{hr.URL.String(), resp.StatusCode, string(body)}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.stdout, "%s %s\n%s", resp.Proto, resp.Status, body)
		if len(body) > 0 && body[len(body)-1] != '\n' {
			fmt.Fprintln(a.stdout)
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return nil
}
