package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Direction is the toxiproxy stream a toxic acts on.
type Direction string

// The two streams of a proxied connection.
const (
	// Upstream is client -> server: the request bytes.
	Upstream Direction = "upstream"
	// Downstream is server -> client: the response bytes. A toxic here lets
	// the request reach the server (which may apply it) and spoils only the
	// response: the ambiguous "did my write happen?" case.
	Downstream Direction = "downstream"
)

// Toxic describes one toxiproxy toxic for [Harness.AddToxic].
type Toxic struct {
	// Type is a toxiproxy toxic type: latency, timeout, reset_peer,
	// bandwidth, slow_close, slicer, limit_data.
	Type string
	// Stream is the direction it acts on.
	Stream Direction
	// Toxicity in [0, 1] is the chance that a connection is affected,
	// drawn once per connection (see the package doc).
	Toxicity float32
	// Attributes are the type's attributes as in toxiproxy's HTTP API,
	// e.g. {"latency": 200, "jitter": 20} (milliseconds).
	Attributes map[string]any
}

// AddToxic adds tx to t's proxy. It applies to open connections as well as
// new ones. remove takes it off again and is idempotent.
func (h *Harness) AddToxic(t Target, tx Toxic) (remove func(), err error) {
	p, err := h.proxy(t)
	if err != nil {
		return nil, fmt.Errorf("chaos: add toxic: %w", err)
	}
	h.mu.Lock()
	h.seq++
	name := fmt.Sprintf("%s_%s_%d", tx.Type, tx.Stream, h.seq)
	h.mu.Unlock()
	body, err := toxicJSON(name, tx)
	if err != nil {
		return nil, fmt.Errorf("chaos: add %s toxic to %s: %w", tx.Type, t, err)
	}
	if _, err := p.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		return nil, fmt.Errorf("chaos: add %s toxic to %s: %w", tx.Type, t, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// The only possible error is ErrToxicNotFound: already gone.
			_ = p.Toxics.RemoveToxic(context.Background(), name)
		})
	}, nil
}

// Latency delays every response chunk from t by latency ± jitter
// (downstream "latency" toxic; millisecond resolution), so each
// request/response round trip takes about latency longer while the server
// works at normal speed. Requests are not delayed; for that, AddToxic with
// [Upstream]. toxicity is the share of connections affected.
func (h *Harness) Latency(t Target, latency, jitter time.Duration, toxicity float32) (remove func(), err error) {
	if latency < 0 || jitter < 0 {
		return nil, fmt.Errorf("chaos: latency on %s: negative latency %v or jitter %v", t, latency, jitter)
	}
	return h.AddToxic(t, Toxic{Type: "latency", Stream: Downstream, Toxicity: toxicity,
		Attributes: map[string]any{"latency": latency.Milliseconds(), "jitter": jitter.Milliseconds()}})
}

// Timeout swallows t's responses (downstream "timeout" toxic): requests reach
// the server and may be applied, but no response byte reaches the client.
// With after > 0 the connection is closed (FIN) after that long; with
// after == 0 it is held open until the client gives up, so callers need
// client timeouts. Removing the toxic closes the connections it held.
// toxicity is the share of connections affected.
func (h *Harness) Timeout(t Target, after time.Duration, toxicity float32) (remove func(), err error) {
	if after < 0 {
		return nil, fmt.Errorf("chaos: timeout on %s: negative after %v", t, after)
	}
	return h.AddToxic(t, Toxic{Type: "timeout", Stream: Downstream, Toxicity: toxicity,
		Attributes: map[string]any{"timeout": after.Milliseconds()}})
}

// ResetPeer resets t's connections when the response starts (downstream
// "reset_peer" toxic, timeout 0): the request reaches the server and may be
// applied, then the client sees "connection reset by peer". Connections
// opened after the toxic was added get a real RST (SO_LINGER 0); ones already
// open when it was added may be closed with a plain FIN instead (the client
// then sees EOF). Either way the call fails.
// toxicity is the share of connections affected.
func (h *Harness) ResetPeer(t Target, toxicity float32) (remove func(), err error) {
	return h.AddToxic(t, Toxic{Type: "reset_peer", Stream: Downstream, Toxicity: toxicity,
		Attributes: map[string]any{"timeout": 0}})
}

// toxicJSON renders tx as toxiproxy's toxic JSON under name, validating it.
func toxicJSON(name string, tx Toxic) ([]byte, error) {
	if tx.Type == "" {
		return nil, errors.New("empty toxic type")
	}
	if tx.Stream != Upstream && tx.Stream != Downstream {
		return nil, fmt.Errorf("stream %q is neither %q nor %q", tx.Stream, Upstream, Downstream)
	}
	if !(tx.Toxicity >= 0 && tx.Toxicity <= 1) { // also rejects NaN
		return nil, fmt.Errorf("toxicity %v outside [0, 1]", tx.Toxicity)
	}
	attrs := tx.Attributes
	if attrs == nil {
		attrs = map[string]any{}
	}
	body, err := json.Marshal(struct {
		Name       string         `json:"name"`
		Type       string         `json:"type"`
		Stream     Direction      `json:"stream"`
		Toxicity   float32        `json:"toxicity"`
		Attributes map[string]any `json:"attributes"`
	}{name, tx.Type, tx.Stream, tx.Toxicity, attrs})
	if err != nil {
		return nil, fmt.Errorf("encode toxic: %w", err)
	}
	return body, nil
}
