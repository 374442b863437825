// Package dockershim puts the SAM CLI's Lambda containers on the host
// network. It is a Docker Engine API proxy on a unix socket, given to the
// SAM CLI as DOCKER_HOST, that passes every call through to the engine
// unchanged except the creation of a Lambda container (label
// sam.cli.container.type=lambda), which it rewrites:
//
//   - HostConfig.NetworkMode becomes "host", and the port bindings go:
//     the container shares the host's network stack, so the function
//     reaches DynamoDB Local and the SQS server on 127.0.0.1;
//   - the variables of Shim.Env are added to the container's environment
//     (the template declares no HOOKWALL_IAM_RECORD, so env.json cannot
//     set it: the SAM CLI passes only the variables the template declares);
//   - the Runtime Interface Emulator, which would listen on 0.0.0.0:8080
//     (one port for every container, on the host), is told to listen where
//     the SAM CLI's port binding said (127.0.0.1:<the free port it chose>),
//     which is where the SAM CLI connects, and to serve the Runtime API on
//     a free loopback port of its own.
//
// Why: the SAM CLI (1.170) documents --docker-network host but never sets
// the container's network mode; it skips connecting to "host" and leaves
// the container on Docker's default network (aws/aws-sam-cli#3609, #4236).
// With an engine started without a bridge (dockerd --bridge=none, as
// `make sam-local` starts it, so that containers have no network but the
// host's loopback), that network has no interface at all and the SAM CLI
// times out connecting to the container.
package dockershim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LambdaLabel is the label, with value "lambda", that the SAM CLI puts on
// the containers that run a function.
const LambdaLabel = "sam.cli.container.type"

// rieDefaultPort is the container port the SAM CLI binds for the Runtime
// Interface Emulator.
const rieDefaultPort = "8080/tcp"

// createPath matches the Engine API's container creation, with or without
// a version prefix.
var createPath = regexp.MustCompile(`^(/v[0-9.]+)?/containers/create$`)

// Shim is the proxy. Serve it on a listener (usually a unix socket) and
// point DOCKER_HOST at that socket.
type Shim struct {
	// Engine is the Docker engine's socket path (default /var/run/docker.sock).
	Engine string
	// FreePort returns a free loopback port for a container's Runtime API
	// (default: one the kernel picks for a listener on 127.0.0.1:0).
	FreePort func() (int, error)
	// Log receives one line per rewritten container (optional).
	Log *slog.Logger
	// Env are NAME=value variables added to every Lambda container's
	// environment (optional; make sam-local-test's runtime records:
	// HOOKWALL_IAM_RECORD=log).
	Env []string

	proxy   *httputil.ReverseProxy
	mu      sync.Mutex
	created []string
}

// lambdaCreate marks a rewritten create request's context.
type lambdaCreate struct{}

// Created returns the ids of the Lambda containers created through the
// shim so far, oldest first: what to remove if the SAM CLI leaves any.
func (s *Shim) Created() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.created...)
}

// record notes the id of a Lambda container the engine created.
func (s *Shim) record(resp *http.Response) error {
	if resp.Request == nil || resp.Request.Context().Value(lambdaCreate{}) == nil || resp.StatusCode != http.StatusCreated {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return err
	}
	var c struct {
		ID string `json:"Id"`
	}
	if json.Unmarshal(b, &c) == nil && c.ID != "" {
		s.mu.Lock()
		s.created = append(s.created, c.ID)
		s.mu.Unlock()
	}
	return nil
}

// Handler returns the proxy's HTTP handler.
func (s *Shim) Handler() http.Handler {
	engine := s.Engine
	if engine == "" {
		engine = "/var/run/docker.sock"
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", engine)
		},
		MaxIdleConns: 16, IdleConnTimeout: 30 * time.Second,
	}
	target := &url.URL{Scheme: "http", Host: "docker"}
	s.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = "docker"
		},
		Transport:      tr,
		ModifyResponse: s.record,
		FlushInterval:  -1, // logs and attach streams pass through as they come
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, fmt.Sprintf("dockershim: the Docker engine at %s: %v", engine, err), http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(s.serve)
}

func (s *Shim) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && createPath.MatchString(r.URL.Path) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, "dockershim: read the create request: "+err.Error(), http.StatusBadRequest)
			return
		}
		out, note, err := s.Rewrite(body)
		if err != nil {
			http.Error(w, "dockershim: "+err.Error(), http.StatusBadRequest)
			return
		}
		if note != "" {
			r = r.WithContext(context.WithValue(r.Context(), lambdaCreate{}, true))
			if s.Log != nil {
				s.Log.Info("dockershim: "+note, slog.String("name", r.URL.Query().Get("name")))
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(out))
		r.ContentLength = int64(len(out))
		r.Header.Set("Content-Length", strconv.Itoa(len(out)))
		r.Header.Del("Transfer-Encoding")
	}
	s.proxy.ServeHTTP(w, r)
}

// Rewrite returns the container creation request body to send to the
// engine: body itself unless it creates a SAM Lambda container, else the
// host-network version described in the package documentation, with a
// note saying what changed.
func (s *Shim) Rewrite(body []byte) ([]byte, string, error) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return body, "", nil // not ours to judge: the engine answers it
	}
	labels, _ := req["Labels"].(map[string]any)
	if labels[LambdaLabel] != "lambda" {
		return body, "", nil
	}
	hc, _ := req["HostConfig"].(map[string]any)
	if hc == nil {
		hc = map[string]any{}
		req["HostConfig"] = hc
	}
	rieAddr, err := rieAddress(hc)
	if err != nil {
		return nil, "", err
	}
	free := s.FreePort
	if free == nil {
		free = FreeLoopbackPort
	}
	apiPort, err := free()
	if err != nil {
		return nil, "", fmt.Errorf("a port for the Runtime API: %w", err)
	}
	apiAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(apiPort))
	entry, err := stringList(req["Entrypoint"])
	if err != nil || len(entry) == 0 {
		return nil, "", fmt.Errorf("the Lambda container has no entry point to give the emulator's addresses to (%v)", req["Entrypoint"])
	}
	if !strings.HasSuffix(entry[0], "aws-lambda-rie") {
		return nil, "", fmt.Errorf("the Lambda container's entry point is %q, not the Runtime Interface Emulator", entry[0])
	}
	// The emulator's flags go right after its path: the rest may be the
	// bootstrap's own arguments.
	entry = append([]string{entry[0], "--runtime-interface-emulator-address", rieAddr, "--runtime-api-address", apiAddr}, entry[1:]...)
	req["Entrypoint"] = entry
	if len(s.Env) > 0 {
		env, _ := req["Env"].([]any)
		for _, kv := range s.Env {
			env = append(env, kv)
		}
		req["Env"] = env
	}
	hc["NetworkMode"] = "host"
	delete(hc, "PortBindings")
	delete(req, "ExposedPorts")
	delete(req, "NetworkingConfig")
	out, err := json.Marshal(req)
	if err != nil {
		return nil, "", fmt.Errorf("encode the create request: %w", err)
	}
	fn, _ := labels["sam.cli.function.name"].(string)
	return out, fmt.Sprintf("Lambda container for %s on the host network (emulator %s, Runtime API %s)", fn, rieAddr, apiAddr), nil
}

// rieAddress is where the SAM CLI expects the emulator: its binding of the
// container's port 8080 (host IP 127.0.0.1 when it gave none).
func rieAddress(hc map[string]any) (string, error) {
	pb, _ := hc["PortBindings"].(map[string]any)
	list, _ := pb[rieDefaultPort].([]any)
	if len(list) == 0 {
		return "", errors.New("the Lambda container binds no host port for the emulator (8080/tcp)")
	}
	b, _ := list[0].(map[string]any)
	port, _ := b["HostPort"].(string)
	if _, err := strconv.Atoi(port); err != nil {
		return "", fmt.Errorf("the emulator's host port %q is not a number", port)
	}
	ip, _ := b["HostIp"].(string)
	if ip == "" || ip == "0.0.0.0" {
		ip = "127.0.0.1"
	}
	return net.JoinHostPort(ip, port), nil
}

func stringList(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("entry point word %v is not a string", e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("entry point %v is neither a string nor a list", v)
}

// FreeLoopbackPort returns a port that was free on 127.0.0.1 a moment ago.
func FreeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Listen serves the shim on a new unix socket at path (replacing a stale
// one) until ctx is done. It returns once the socket accepts connections.
func (s *Shim) Listen(ctx context.Context, path string) (stop func(), err error) {
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("dockershim: listen on %s: %w", path, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	done := make(chan struct{})
	var once sync.Once
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
		}
		_ = srv.Close()
		_ = os.Remove(path)
	}()
	return func() { once.Do(func() { close(done) }) }, nil
}
