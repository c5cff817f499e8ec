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
// Refused, because they make the provider act outside the box: tools other
// than function, custom, namespace (checked inside), client-executed
// tool_search and the client-side shell and patch tools; stored or
// background responses and server-side conversations; MCP items and item
// references; images or files the provider would fetch by URL or take from
// its Files API. For chat completions: any tool but function, web search
// options and the search or plugin switches some providers add.
package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/cred"
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
// switches.
var CodexForward = []string{
	"originator", "user-agent", "accept", "version", "session-id", "session_id", "thread-id",
	"conversation_id", "x-client-request-id", "x-codex-*", "x-openai-internal-codex-responses-lite",
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
	b.Credential = bearer(key)
	return b
}

// NewCompatible is chat completions at an OpenAI-compatible provider with
// its API key.
func NewCompatible(provider string, upstream *url.URL, key cred.Source) *egress.Backend {
	b := base("openai-compatible:"+provider, upstream, ChatRoutes, ChatForward, CheckChat)
	b.PolicyStatus = http.StatusForbidden
	b.Error = ChatErrorBody
	b.Credential = bearer(key)
	return b
}

// responsesTools are the tool types the client itself executes.
var responsesTools = map[string]bool{
	"function": true, "custom": true, "namespace": true, "tool_search": true,
	"local_shell": true, "shell": true, "apply_patch": true,
}

// CheckResponses is the body policy for POST /responses.
func CheckResponses(_ egress.Route, body map[string]any) error {
	if v, ok := body["store"]; ok && v != false && v != nil {
		return egress.Refuse("'store' must be false: stored responses live on the provider's servers")
	}
	if v, ok := body["background"]; ok && v != false && v != nil {
		return egress.Refuse("background responses run on the provider's servers after the box's request ends")
	}
	for _, k := range []string{"conversation", "previous_response_id", "prompt"} {
		if v, ok := body[k]; ok && v != nil {
			return egress.Refuse("'%s' refers to state stored on the provider's servers, which strict mode does not use", k)
		}
	}
	if err := checkResponsesTools(body, 0); err != nil {
		return err
	}
	if _, ok := body["input"].(string); ok {
		return nil
	}
	items, err := egress.Objects(body, "input")
	if err != nil {
		return err
	}
	for _, item := range items {
		if err := checkInputItem(item); err != nil {
			return err
		}
	}
	return nil
}

// checkResponsesTools checks the tools of parent (the body, a namespace
// tool or an additional_tools item).
func checkResponsesTools(parent map[string]any, depth int) error {
	tools, err := egress.Objects(parent, "tools")
	if err != nil {
		return err
	}
	if depth > 4 {
		return egress.Refuse("tool namespaces are nested too deeply")
	}
	for i, tool := range tools {
		t, _ := tool["type"].(string)
		if !responsesTools[t] {
			if t == "" {
				return egress.Refuse("tool %d has no type", i)
			}
			return serverTool(t)
		}
		switch t {
		case "namespace":
			if err := checkResponsesTools(tool, depth+1); err != nil {
				return err
			}
		case "tool_search":
			if ex, _ := tool["execution"].(string); ex != "client" {
				return egress.Refuse("tool type 'tool_search' must run in the client ('execution': 'client'); on the provider's servers it searches tools the box did not send")
			}
		}
	}
	return nil
}

func serverTool(t string) error {
	for _, p := range []string{"web_search", "file_search", "code_interpreter", "computer", "image_generation", "mcp"} {
		if strings.HasPrefix(t, p) {
			return egress.Refuse("tool type '%s' runs on the provider's servers; the box has no network", t)
		}
	}
	return egress.Refuse("tool type '%s' is not a client-side tool aisan knows; it is refused in case it runs on the provider's servers", t)
}

func checkInputItem(item map[string]any) error {
	t, _ := item["type"].(string)
	switch {
	case t == "item_reference":
		return egress.Refuse("input items of type 'item_reference' read responses stored on the provider's servers")
	case strings.HasPrefix(t, "mcp_"):
		return egress.Refuse("input items of type '%s' drive MCP servers from the provider's side; the box has no network", t)
	case t == "additional_tools":
		if err := checkResponsesTools(item, 0); err != nil {
			return err
		}
	}
	for _, k := range []string{"content", "output"} {
		if err := checkParts(item[k], 0); err != nil {
			return err
		}
	}
	return nil
}

// checkParts refuses content the provider would fetch: an image by URL
// (only data: URLs are inline) or a file by id or URL.
func checkParts(v any, depth int) error {
	parts, ok := v.([]any)
	if !ok || depth > 8 {
		return nil
	}
	for _, pv := range parts {
		p, ok := pv.(map[string]any)
		if !ok {
			continue
		}
		if err := checkImageURL(p["image_url"]); err != nil {
			return err
		}
		for _, k := range []string{"file_id", "file_url"} {
			if s, ok := p[k].(string); ok && s != "" {
				return egress.Refuse("content with a '%s' makes the provider use a file it stores or fetches; attach the data itself", k)
			}
		}
		if f, ok := p["file"].(map[string]any); ok {
			if s, ok := f["file_id"].(string); ok && s != "" {
				return egress.Refuse("content with a 'file_id' makes the provider use a file it stores; attach the data itself")
			}
		}
		if err := checkParts(p["content"], depth+1); err != nil {
			return err
		}
	}
	return nil
}

func checkImageURL(v any) error {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case map[string]any:
		s, _ = x["url"].(string)
	default:
		return nil
	}
	if s != "" && !strings.HasPrefix(s, "data:") {
		return egress.Refuse("an image given by URL makes the provider fetch it; only inline (data:) images are allowed")
	}
	return nil
}

// chatRefused are chat-completion fields that make a provider search the
// web or run plugins.
var chatRefused = []string{"web_search_options", "plugins", "search_parameters", "enable_search", "web_search", "search"}

// CheckChat is the body policy for POST /chat/completions.
func CheckChat(_ egress.Route, body map[string]any) error {
	for _, k := range chatRefused {
		if v, ok := body[k]; ok && v != nil && v != false {
			return egress.Refuse("the field '%s' makes the provider search the web or run plugins; the box has no network", k)
		}
	}
	if v, ok := body["store"]; ok && v != false && v != nil {
		return egress.Refuse("'store' must be false: stored completions live on the provider's servers")
	}
	tools, err := egress.Objects(body, "tools")
	if err != nil {
		return err
	}
	for i, tool := range tools {
		if t, _ := tool["type"].(string); t != "function" {
			if t == "" {
				return egress.Refuse("tool %d has no type; only 'function' tools are allowed", i)
			}
			return serverTool(t)
		}
	}
	msgs, err := egress.Objects(body, "messages")
	if err != nil {
		return err
	}
	for _, msg := range msgs {
		if err := checkParts(msg["content"], 0); err != nil {
			return err
		}
	}
	return nil
}
