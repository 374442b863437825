package chaos

import "strings"

// EnvVia returns the stack's Env with AWS_ENDPOINT_URL_DYNAMODB and
// AWS_ENDPOINT_URL_SQS pointing at h's proxies, ready for a Hookwall process
// (append to os.Environ()) whose traffic should go through the faults. The
// QUEUE_URL and DLQ_URL values keep naming the SQS server directly: the SDK
// sends requests to the endpoint, the queue URL only names the queue.
func (s *Stack) EnvVia(h *Harness) []string {
	out := make([]string, 0, len(s.Env))
	for _, kv := range s.Env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "AWS_ENDPOINT_URL_DYNAMODB":
			kv = k + "=" + h.DynamoURL
		case "AWS_ENDPOINT_URL_SQS":
			kv = k + "=" + h.SQSURL
		}
		out = append(out, kv)
	}
	return out
}

// parseEnvFile turns the env file's "export KEY=VALUE" lines into KEY=VALUE,
// skipping blank lines, comments and anything without '='. Values are taken
// verbatim (services-up.sh writes them unquoted).
func parseEnvFile(text string) []string {
	var env []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "export "))
		if k, _, ok := strings.Cut(line, "="); !ok || k == "" {
			continue
		}
		env = append(env, line)
	}
	return env
}

// envValue returns the value of key in KEY=VALUE lines (the last one wins,
// as in a shell), or "" when absent.
func envValue(env []string, key string) string {
	val := ""
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			val = v
		}
	}
	return val
}
