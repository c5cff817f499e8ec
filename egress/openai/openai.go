// Package openai holds the egress backends for OpenAI-shaped APIs: the
// Responses API as codex uses it (at the ChatGPT backend with the host's
// ChatGPT login, or at the OpenAI API with a key), and chat completions
// for opencode's OpenAI-compatible providers. Each is routes, header
// allow-lists, a body policy, credential headers, and the box-side client
// configuration (codex's custom provider, opencode's provider override).
//
// # Rules
//
// Policy refusals carry x-should-retry: false and a status chosen per
// client, because they disagree: codex 0.171.0 shows a 400's body and does
// not retry it, but retries a 403 five times; opencode 1.18.33 shows a 403
// and does not retry it. So the Responses backends answer 400 and the
// chat-completions backend 403, both as invalid_request_error. opencode
// also retries, for about two minutes, any error whose message or body
// merely contains one of its transient-error words or numbers (429, 503,
// "rate limit", "server error", …, anywhere, so the 503 inside
// "web_search_20250305" counts); the chat backend's refusals therefore keep
// digit runs from reading as such a number (see ChatErrorBody).
//
// The body policies are allow-lists (policy.go, printed by aisan explain
// --policy codex and --policy openai-compatible): what codex and opencode
// send, each field, item, part and tool at its position. Refused by name,
// because they make the provider act outside the box: tools the provider
// runs (web and file search, code interpreter, hosted shell containers,
// computer use, image generation, MCP), a tool search it would run,
// stored or background responses and server-side conversations, MCP items
// and item references, images or files it would fetch by URL or take from
// its Files API, and the web-search switches some chat providers add.
// Anything else not listed is refused as unknown, naming its JSON path.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/policy"
)

// Upstream defaults (overrides: AISAN_CODEX_UPSTREAM, AISAN_OPENAI_UPSTREAM).
const (
	DefaultCodexUpstream  = "https://chatgpt.com/backend-api/codex"
	DefaultOpenAIUpstream = "https://api.openai.com/v1"
)

// Placeholder is what the box's client sends as its key when the box has no
// network (a --net box sends its per-box token instead).
const Placeholder = "aisan-placeholder-not-a-credential"

// MaxBody caps a request body.
const MaxBody = 32 << 20

// ResponsesRoutes is all codex sends to a custom provider.
var ResponsesRoutes = []egress.Route{{Method: "POST", Path: "/responses"}}

// ChatRoutes is all opencode sends to an OpenAI-compatible provider.
var ChatRoutes = []egress.Route{{Method: "POST", Path: "/chat/completions"}}

// CodexForward are codex's own headers, passed upstream: the ChatGPT
// backend reads originator, the session and turn ids and the beta
// switches. They are named one by one, not by a prefix: an x-codex-*
// header codex 0.171.0 does not send on /responses (a routing hint, a
// program or safety switch) is dropped, as is OpenAI-Beta, which it sends
// only to open a websocket. The values of the switches are checked
// (CheckResponsesHeader); the rest are ids and metadata.
var CodexForward = []string{
	"originator", "user-agent", "accept", "version", "session-id", "session_id", "thread-id",
	"conversation_id", "x-client-request-id", "x-codex-beta-features", "x-codex-turn-metadata",
	"x-codex-turn-state", "x-codex-window-id", "x-codex-parent-thread-id", "x-codex-installation-id",
	"x-openai-internal-codex-responses-lite",
}

// ChatForward are opencode's headers, passed upstream.
var ChatForward = []string{"user-agent", "accept", "x-session-id", "x-session-affinity"}

// Return are the response headers passed back.
var Return = []string{
	"content-type", "content-length", "content-encoding", "retry-after", "retry-after-ms", "x-should-retry", "x-request-id", "request-id",
	"openai-processing-ms", "openai-version", "x-ratelimit-*", "x-codex-*",
}

// ErrorBody is the OpenAI error shape.
func ErrorBody(status int, kind egress.Kind, msg string) []byte {
	t, code := "invalid_request_error", "aisan_strict_mode"
	switch kind {
	case egress.KindAuth, egress.KindCredential:
		t, code = "authentication_error", "invalid_api_key"
	case egress.KindRate:
		t, code = "rate_limit_error", "rate_limit_exceeded"
	case egress.KindUpstream:
		t, code = "server_error", "upstream_unreachable"
	case egress.KindTooLarge:
		code = "request_too_large"
	case egress.KindBudget:
		code = "aisan_budget_spent"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": t, "param": nil, "code": code}})
	return b
}

// ChatErrorBody is ErrorBody for opencode: every run of three or more
// digits in a policy refusal gets an invisible word joiner (U+2060) between
// its digits, so the text reads the same but never matches opencode's
// retry patterns. Rate limits are left alone: those should be retried.
func ChatErrorBody(status int, kind egress.Kind, msg string) []byte {
	if kind != egress.KindRate && kind != egress.KindUpstream {
		msg = breakDigitRuns(msg)
	}
	return ErrorBody(status, kind, msg)
}

func breakDigitRuns(s string) string {
	var b strings.Builder
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			// Look ahead: only runs of three or more are broken up.
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if run == 0 && j-i < 3 {
				b.WriteString(s[i:j])
				i = j - 1
				continue
			}
			if run > 0 {
				b.WriteString("\u2060")
			}
			run++
			b.WriteByte(c)
			continue
		}
		run = 0
		b.WriteByte(c)
	}
	return b.String()
}

func base(name string, upstream *url.URL, routes []egress.Route, fwd []string, check func(egress.Route, map[string]any) error) *egress.Backend {
	return &egress.Backend{
		Usage:        ResponsesUsage,
		OutputCaps:   ResponsesOutputCaps,
		Name:         name,
		Upstream:     upstream,
		Routes:       routes,
		Forward:      fwd,
		Return:       Return,
		MaxBody:      MaxBody,
		Check:        check,
		Error:        ErrorBody,
		PolicyStatus: http.StatusBadRequest,
	}
}

func bearer(src cred.Source) func(context.Context) (egress.Credential, error) {
	return func(ctx context.Context) (egress.Credential, error) {
		tok, err := src.Token(ctx)
		if err != nil {
			return nil, err
		}
		return egress.Credential{{Name: "Authorization", Value: cred.NewSecret("Bearer " + tok.Reveal())}}, nil
	}
}

// NewCodex is the ChatGPT backend: Responses at the ChatGPT codex backend,
// authenticated with the host's ChatGPT login and its account id.
func NewCodex(upstream *url.URL, login *cred.CodexChatGPT) *egress.Backend {
	b := base("codex", upstream, ResponsesRoutes, CodexForward, CheckResponses)
	headers := func(l cred.CodexLogin) egress.Credential {
		return egress.Credential{
			{Name: "Authorization", Value: cred.NewSecret("Bearer " + l.Access.Reveal())},
			{Name: "ChatGPT-Account-Id", Value: cred.NewSecret(l.AccountID)},
		}
	}
	b.Credential = func(ctx context.Context) (egress.Credential, error) {
		l, err := login.Login(ctx)
		if err != nil {
			return nil, err
		}
		return headers(l), nil
	}
	b.Refresh = func(ctx context.Context, stale egress.Credential) (egress.Credential, error) {
		old, _ := strings.CutPrefix(stale.Get("Authorization").Reveal(), "Bearer ")
		l, err := login.RefreshLogin(ctx, cred.NewSecret(old))
		if err != nil {
			return nil, err
		}
		return headers(l), nil
	}
	b.Adjust = CodexHeaders
	b.CheckHeader = CheckResponsesHeader
	return b
}

// CodexHeaders adds what codex sends the ChatGPT backend itself but not a
// custom provider: an originator, and its version (taken from its
// user-agent, "codex_exec/0.171.0 (…)").
func CodexHeaders(out, _ http.Header, _ egress.Credential) {
	if out.Get("Originator") == "" {
		out.Set("Originator", "codex_cli_rs")
	}
	if out.Get("Version") == "" {
		ua := out.Get("User-Agent")
		if name, rest, ok := strings.Cut(ua, "/"); ok && strings.HasPrefix(name, "codex") {
			v, _, _ := strings.Cut(rest, " ")
			if v != "" && strings.Trim(v, "0123456789.") == "" {
				out.Set("Version", v)
			}
		}
	}
}

// NewOpenAI is Responses at the OpenAI API with an API key.
func NewOpenAI(upstream *url.URL, key cred.Source) *egress.Backend {
	b := base("openai", upstream, ResponsesRoutes, CodexForward, CheckResponses)
	b.CheckHeader = CheckResponsesHeader
	b.Credential = bearer(key)
	return b
}

// NewCompatible is chat completions at an OpenAI-compatible provider with
// its API key, for the models the host names (its configured models and
// those its declaration of the provider lists).
func NewCompatible(provider string, upstream *url.URL, key cred.Source, models []string) *egress.Backend {
	b := base("openai-compatible:"+provider, upstream, ChatRoutes, ChatForward, func(r egress.Route, body map[string]any) error {
		if err := CheckChat(r, body); err != nil {
			return err
		}
		return CheckModel(body, models)
	})
	b.Usage = ChatUsage
	b.OutputCaps = ChatOutputCaps
	b.PolicyStatus = http.StatusForbidden
	b.Error = ChatErrorBody
	b.Credential = bearer(key)
	return b
}

// CheckResponses is the body policy for POST /responses: the table of
// ResponsesPolicy.
func CheckResponses(_ egress.Route, body map[string]any) error {
	return ResponsesPolicy().Check(body)
}

// CheckResponsesHeader is the header policy of POST /responses: each
// value of a switch codex sends (its beta features, the Responses Lite
// marker) must be one ResponsesPolicy lists.
func CheckResponsesHeader(_ egress.Route, values func(string) []string) error {
	return ResponsesPolicy().CheckHeaders(values)
}

// CheckModel refuses a model the host does not name. A provider's model
// name alone can turn on tools the provider runs (web search, fetching a
// URL, running code: a router's search models, an "agentic" compound
// model), which the body policy cannot see; so only the models the user
// chose on the host are served, and none when the host names none.
func CheckModel(body map[string]any, models []string) error {
	m, _ := body["model"].(string)
	if slices.Contains(models, m) {
		return nil
	}
	if len(models) == 0 {
		return &policy.Refusal{Path: "model", Known: true,
			Why: "the host names no model for this provider: set one with --model, or \"model\" (and \"small_model\") in opencode's config on the host"}
	}
	return &policy.Refusal{Path: "model", Known: true,
		Why: fmt.Sprintf("%q is not a model the host names (%s): a model can turn on tools the provider runs; choose it on the host with --model, or declare it in opencode's config there", m, strings.Join(models, ", "))}
}

// CheckChat is the body policy for POST /chat/completions: the table of
// ChatPolicy, and a stream must ask for its usage. Without
// stream_options.include_usage a stream reports no usage, and the box's
// calls would count nothing against its budget.
func CheckChat(_ egress.Route, body map[string]any) error {
	if err := ChatPolicy().Check(body); err != nil {
		return err
	}
	if body["stream"] == true {
		if _, ok := body["stream_options"]; !ok {
			return &policy.Refusal{Path: "stream_options", Known: true,
				Why: "a stream needs stream_options.include_usage true: " + whyUsage}
		}
	}
	return nil
}
