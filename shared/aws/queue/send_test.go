package queue

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

func envOf(key string, payloadBytes int) webhook.Envelope {
	return webhook.Envelope{Key: key, Provider: "line", Tenant: "t", Type: "message",
		Payload: []byte(`{"text":"` + strings.Repeat("<", payloadBytes) + `"}`)}
}

func TestEncodeMessageKeepsSmallPayloadsInline(t *testing.T) {
	env := envOf("k1", 1000)
	b, err := EncodeMessage(&env)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), strings.Repeat("<", 1000)) || strings.Contains(string(b), "payloadInRecord") {
		t.Fatalf("message = %.200s, want the payload inline and unescaped", b)
	}
}

func TestEncodeMessageLeavesLargePayloadsInTheRecord(t *testing.T) {
	env := envOf("k1", InlinePayloadBytes)
	b, err := EncodeMessage(&env)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1024 || !strings.Contains(string(b), `"payloadInRecord":true`) || strings.Contains(string(b), `"payload"`) {
		t.Fatalf("message (%d bytes) = %.200s, want the key alone", len(b), b)
	}
	if len(env.Payload) == 0 {
		t.Fatal("EncodeMessage changed its argument")
	}
}

func TestEncodeMessageRefusesInvalidUTF8(t *testing.T) {
	env := webhook.Envelope{Key: "k", Payload: []byte("{\"a\":\"\xff\"}")}
	if _, err := EncodeMessage(&env); !errors.Is(err, webhook.ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
}

func TestBatchesSplitByCountAndBytes(t *testing.T) {
	cases := []struct {
		name    string
		sizes   []int
		batches []int // entries per batch
	}{
		{"small by count", repeat(100, 25), []int{10, 10, 5}},
		{"ten of 60 KiB", repeat(60<<10, 10), []int{4, 4, 2}},
		{"one large, then small", append([]int{250 << 10}, repeat(10<<10, 3)...), []int{1, 3}},
		{"none", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			envs := make([]webhook.Envelope, len(c.sizes))
			bodies := make([]string, len(c.sizes))
			for i, n := range c.sizes {
				envs[i] = webhook.Envelope{Key: "line#t#" + strings.Repeat("k", 20)}
				bodies[i] = strings.Repeat("x", n)
			}
			got := Batches(envs, bodies)
			if len(got) != len(c.batches) {
				t.Fatalf("batches = %v, want sizes %v", got, c.batches)
			}
			next := 0
			for i, b := range got {
				size := 0
				for _, idx := range b {
					if idx != next {
						t.Fatalf("batch %d holds %d, want %d (order kept)", i, idx, next)
					}
					next++
					size += len(bodies[idx]) + attributesBytes(envs[idx].Key)
				}
				if len(b) != c.batches[i] || len(b) > MaxBatch || (len(b) > 1 && size > MaxBatchBytes) {
					t.Fatalf("batch %d: %d entries, %d bytes; want %d entries within %d bytes", i, len(b), size, c.batches[i], MaxBatchBytes)
				}
			}
		})
	}
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

func TestNotSent(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want []int
	}{
		{"sent", nil, nil},
		{"some not sent", fmt.Errorf("enqueue: %w", &SendError{Failed: []int{1, 3}, Err: errors.New("throttled")}), []int{1, 3}},
		{"the call failed", errors.New("no such queue"), []int{0, 1, 2, 3}},
	} {
		got := NotSent(tt.err, 4)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
		for _, i := range tt.want {
			if !got[i] {
				t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
			}
		}
	}
}
