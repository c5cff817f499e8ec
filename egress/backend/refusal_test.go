package backend_test

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/openai"
	"github.com/aisan-dev/aisan/egress/vertex"
)

// TestRefusalShape is the status and error body of each kind of refusal
// on each backend, as its client was measured to show it (a strict box,
// the real client, a stand-in upstream: tests/refusal_test.go). What no
// retry or login can change (the policy's refusal, a spent budget, an
// unusable host credential) must be a status the client shows with the
// reason, sends once, and does not take for a login to renew: Claude
// shows a 403 as "Failed to authenticate" / "Please run /login" and
// resends a 400 or a 422 six times, so it gets a 402; codex resends
// everything but a 400 five times, so it gets a 400; opencode shows
// every one of them once and keeps its 403. Only a rate limit and an
// unreachable upstream may be retried.
func TestRefusalShape(t *testing.T) {
	up := &url.URL{Scheme: "https", Host: "upstream.test"}
	backends := map[string]*egress.Backend{
		"anthropic":  anthropic.New(up, anthropic.Subscription, nil),
		"vertex":     vertex.New(up, vertex.Config{Project: "p", Region: "us-east5"}, nil),
		"codex":      openai.NewCodex(up, nil),
		"openai":     openai.NewOpenAI(up, nil),
		"compatible": openai.NewCompatible("zai", up, nil, []string{"glm-5.3"}),
	}
	// want is status and error type per kind, per client family.
	type shape struct {
		status int
		typ    string
	}
	claude := map[egress.Kind]shape{
		egress.KindPolicy:     {402, "permission_error"},
		egress.KindBudget:     {402, "billing_error"},
		egress.KindCredential: {402, "authentication_error"},
		egress.KindAuth:       {401, "authentication_error"},
		egress.KindTooLarge:   {413, "request_too_large"},
		egress.KindRate:       {429, "rate_limit_error"},
		egress.KindUpstream:   {502, "api_error"},
	}
	codex := map[egress.Kind]shape{
		egress.KindPolicy:     {400, "invalid_request_error"},
		egress.KindBudget:     {400, "invalid_request_error"},
		egress.KindCredential: {400, "authentication_error"},
		egress.KindAuth:       {401, "authentication_error"},
		egress.KindTooLarge:   {413, "invalid_request_error"},
		egress.KindRate:       {429, "rate_limit_error"},
		egress.KindUpstream:   {502, "server_error"},
	}
	opencode := map[egress.Kind]shape{}
	for k, v := range codex {
		opencode[k] = v
	}
	for _, k := range []egress.Kind{egress.KindPolicy, egress.KindBudget, egress.KindCredential} {
		opencode[k] = shape{403, opencode[k].typ}
	}
	want := map[string]map[egress.Kind]shape{"anthropic": claude, "vertex": claude, "codex": codex, "openai": codex, "compatible": opencode}

	const reason = "aisan strict mode refused this request: tools[0].type: a tool type \"web_search_20250305\" is refused (where and why)"
	for name, b := range backends {
		for kind, w := range want[name] {
			rec := httptest.NewRecorder()
			got := b.WriteRefusal(rec, &egress.Refusal{Kind: kind, Reason: reason, RetryAfter: time.Second})
			var body struct {
				Type  string
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Errorf("%s kind %d: body %q: %v", name, kind, rec.Body, err)
				continue
			}
			if got != w.status || rec.Code != w.status || body.Error.Type != w.typ {
				t.Errorf("%s kind %d: %d %s, want %d %s", name, kind, rec.Code, body.Error.Type, w.status, w.typ)
			}
			msg := body.Error.Message
			if name == "compatible" {
				msg = stripJoiners(msg)
			}
			if msg != reason {
				t.Errorf("%s kind %d: message %q, want the reason whole", name, kind, body.Error.Message)
			}
			if (name == "anthropic" || name == "vertex") != (body.Type == "error") {
				t.Errorf("%s kind %d: top-level type %q", name, kind, body.Type)
			}
			retry := rec.Header().Get("X-Should-Retry")
			if mayRetry := kind == egress.KindRate || kind == egress.KindUpstream; mayRetry == (retry == "false") {
				t.Errorf("%s kind %d: x-should-retry %q", name, kind, retry)
			}
		}
	}
}

func stripJoiners(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r != '\u2060' {
			out = append(out, r)
		}
	}
	return string(out)
}
