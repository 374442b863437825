package dockershim

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// samCreate is a container creation body as the SAM CLI sends it.
const samCreate = `{"Image":"hookwall-lambda-base:rapid-x86_64","Cmd":["bootstrap"],"WorkingDir":"/var/task",
"Entrypoint":["/var/rapid/aws-lambda-rie","--log-level","error"],
"Labels":{"sam.cli.container.type":"lambda","sam.cli.function.name":"ReceiverFunction"},
"ExposedPorts":{"8080/tcp":{}},
"HostConfig":{"Binds":["/work/.aws-sam/build/ReceiverFunction:/var/task:ro,delegated"],
"PortBindings":{"8080/tcp":[{"HostIp":"127.0.0.1","HostPort":"5017"}]},"Memory":268435456}}`

func TestRewriteLambdaContainer(t *testing.T) {
	s := &Shim{FreePort: func() (int, error) { return 41000, nil }}
	out, note, err := s.Rewrite([]byte(samCreate))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	hc := got["HostConfig"].(map[string]any)
	if hc["NetworkMode"] != "host" {
		t.Errorf("NetworkMode %v, want host", hc["NetworkMode"])
	}
	if _, ok := hc["PortBindings"]; ok {
		t.Error("port bindings kept: host networking publishes nothing")
	}
	if _, ok := got["ExposedPorts"]; ok {
		t.Error("exposed ports kept")
	}
	want := []any{"/var/rapid/aws-lambda-rie", "--runtime-interface-emulator-address", "127.0.0.1:5017",
		"--runtime-api-address", "127.0.0.1:41000", "--log-level", "error"}
	if !reflect.DeepEqual(got["Entrypoint"], want) {
		t.Errorf("entry point %v\nwant %v", got["Entrypoint"], want)
	}
	// What the shim does not touch stays.
	if hc["Memory"] != float64(268435456) || got["WorkingDir"] != "/var/task" || !reflect.DeepEqual(hc["Binds"], []any{"/work/.aws-sam/build/ReceiverFunction:/var/task:ro,delegated"}) {
		t.Errorf("other fields changed: %s", out)
	}
	if !strings.Contains(note, "ReceiverFunction") || !strings.Contains(note, "127.0.0.1:5017") {
		t.Errorf("note %q", note)
	}
}

// Shim.Env reaches the Lambda container's environment, after the SAM CLI's own.
func TestRewriteAddsEnv(t *testing.T) {
	s := &Shim{FreePort: func() (int, error) { return 41000, nil }, Env: []string{"HOOKWALL_IAM_RECORD=log"}}
	withEnv := strings.Replace(samCreate, `"WorkingDir"`, `"Env":["TABLE_NAME=t"],"WorkingDir"`, 1)
	for body, want := range map[string][]any{
		samCreate: {"HOOKWALL_IAM_RECORD=log"},
		withEnv:   {"TABLE_NAME=t", "HOOKWALL_IAM_RECORD=log"},
	} {
		out, _, err := s.Rewrite([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got["Env"], want) {
			t.Errorf("Env %v, want %v", got["Env"], want)
		}
	}
}

func TestRewriteLeavesOtherContainersAlone(t *testing.T) {
	s := &Shim{FreePort: func() (int, error) { t.Fatal("port asked for"); return 0, nil }}
	for _, body := range []string{
		`{"Image":"busybox","Cmd":["true"],"HostConfig":{"NetworkMode":"none"}}`,
		`{"Image":"x","Labels":{"sam.cli.container.type":"build"}}`,
		`not json`,
	} {
		out, note, err := s.Rewrite([]byte(body))
		if err != nil || note != "" || string(out) != body {
			t.Errorf("%s: rewritten to %s (note %q, err %v)", body, out, note, err)
		}
	}
}

func TestRewriteRefusesWhatItCannotPlace(t *testing.T) {
	s := &Shim{FreePort: func() (int, error) { return 41000, nil }}
	for name, body := range map[string]string{
		"no port binding": `{"Entrypoint":["/var/rapid/aws-lambda-rie"],"Labels":{"sam.cli.container.type":"lambda"},"HostConfig":{}}`,
		"not the emulator": `{"Entrypoint":["/bin/sh"],"Labels":{"sam.cli.container.type":"lambda"},
			"HostConfig":{"PortBindings":{"8080/tcp":[{"HostIp":"127.0.0.1","HostPort":"5000"}]}}}`,
		"no entry point": `{"Labels":{"sam.cli.container.type":"lambda"},
			"HostConfig":{"PortBindings":{"8080/tcp":[{"HostIp":"","HostPort":"5000"}]}}}`,
	} {
		if _, _, err := s.Rewrite([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The proxy passes calls through to the engine, the creation of a Lambda
// container rewritten, and remembers the containers it created.
func TestProxyThroughAFakeEngine(t *testing.T) {
	dir := t.TempDir()
	engineSock := filepath.Join(dir, "engine.sock")
	ln, err := net.Listen("unix", engineSock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies []string
	engine := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.Method+" "+r.URL.Path+" "+string(b))
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/containers/create") {
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"Id":"c0ffee","Warnings":[]}`)
			return
		}
		io.WriteString(w, "OK")
	})}
	go engine.Serve(ln)
	defer engine.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &Shim{Engine: engineSock, FreePort: func() (int, error) { return 41001, nil }}
	shimSock := filepath.Join(dir, "shim.sock")
	stop, err := s.Listen(ctx, shimSock)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", shimSock)
	}}}
	resp, err := client.Get("http://docker/v1.41/_ping")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "OK" {
		t.Fatalf("ping answered %q", b)
	}
	resp, err = client.Post("http://docker/v1.41/containers/create?name=x", "application/json", strings.NewReader(samCreate))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create answered %s", resp.Status)
	}
	resp, err = client.Post("http://docker/v1.41/containers/create", "application/json", strings.NewReader(`{"Image":"other"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 3 || !strings.Contains(bodies[1], `"NetworkMode":"host"`) || !strings.Contains(bodies[1], "127.0.0.1:41001") {
		t.Fatalf("the engine saw %q", bodies)
	}
	if bodies[2] != `POST /v1.41/containers/create {"Image":"other"}` {
		t.Errorf("another container's creation was changed: %s", bodies[2])
	}
	if got := s.Created(); !reflect.DeepEqual(got, []string{"c0ffee"}) {
		t.Errorf("created %v, want only the Lambda container", got)
	}
}
