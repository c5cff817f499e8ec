// Package anthropic is the egress backend for the Anthropic Messages API,
// as the Claude CLI uses it: the routes, the header allow-lists, the body
// policy, the credential headers and the box environment that routes the
// client to its in-box endpoint.
//
// # Rules
//
// The box's Claude is given a placeholder CLAUDE_CODE_OAUTH_TOKEN (for the
// host's subscription login) or a placeholder ANTHROPIC_API_KEY (for an API
// key), so the request it sends is the genuine one for that kind of login,
// billing header and identity system prompt included; the proxy never
// rewrites a body. Refusals that no retry or login changes answer 402
// (see PolicyStatus) with x-should-retry: false, in the error type of
// their kind: permission_error for the policy, billing_error for a spent
// budget, authentication_error for the host's credential.
//
// The body policy is an allow-list (policy.go, printed by aisan explain
// --policy anthropic): the fields, content blocks, sources and tools the
// Claude CLI sends, each at its position. What makes Anthropic's servers
// act outside the box is refused by name (tools that run on the provider,
// MCP connectors, containers, url and file sources, stored
// conversations); anything else the table does not list is refused as
// unknown, naming its JSON path. The table lists the anthropic-beta values
// too (Betas): a beta switches features on for the call, so one the table
// does not know is refused, naming the header and the value.
package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/cred"
)

// DefaultUpstream is the real API (override: AISAN_ANTHROPIC_UPSTREAM).
const DefaultUpstream = "https://api.anthropic.com"

// Placeholder is what the box's client sends as its credential when the
// box has no network (a --net box sends its per-box token instead).
const Placeholder = "aisan-placeholder-not-a-credential"

// MaxBody is the API's own request limit.
const MaxBody = 32 << 20

// oauthBeta is the beta a subscription token needs upstream.
const oauthBeta = "oauth-2025-04-20"

// Routes are the only requests the Claude CLI sends to ANTHROPIC_BASE_URL
// once nonessential traffic is off; the SDKs send the same paths without
// the query.
var Routes = []egress.Route{
	{Method: "POST", Path: "/v1/messages", Query: "beta=true"},
	{Method: "POST", Path: "/v1/messages/count_tokens", Query: "beta=true", Uncounted: true},
	{Method: "POST", Path: "/v1/messages"},
	{Method: "POST", Path: "/v1/messages/count_tokens", Uncounted: true},
}

// Forward are the request headers passed upstream: the API version and
// betas, and the client's identity headers, which the subscription's
// billing looks at. Credential headers are never in this list.
var Forward = append([]string{
	"anthropic-version", "anthropic-beta", "anthropic-dangerous-direct-browser-access",
	"x-app", "x-claude-code-session-id", "x-client-request-id", "user-agent", "accept",
}, SDKHeaders...)

// SDKHeaders are the x-stainless-* headers by which the Claude CLI's
// SDK describes itself (2.1.332's, read off its binary): named one by
// one, so another x-stainless-* header a box sends is dropped, not
// passed upstream for the API to act on as it may.
var SDKHeaders = []string{
	"x-stainless-lang", "x-stainless-package-version", "x-stainless-os", "x-stainless-arch",
	"x-stainless-runtime", "x-stainless-runtime-version", "x-stainless-retry-count",
	"x-stainless-timeout", "x-stainless-helper", "x-stainless-helper-method",
}

// Return are the response headers passed back: content type, the retry
// and rate-limit headers the client's backoff reads, and request ids.
var Return = []string{
	"content-type", "content-length", "content-encoding", "retry-after", "retry-after-ms", "x-should-retry", "request-id", "x-request-id",
	"anthropic-ratelimit-*", "anthropic-organization-id",
}

// Kind says which host credential the upstream gets.
type Kind int

const (
	// Subscription is the host's Claude login (Authorization: Bearer).
	Subscription Kind = iota
	// APIKey is an API key (x-api-key).
	APIKey
)

// New returns the backend. src yields the access token (Subscription) or
// the key (APIKey).
func New(upstream *url.URL, kind Kind, src cred.Source) *egress.Backend {
	b := &egress.Backend{
		Name:         "anthropic",
		Upstream:     upstream,
		Routes:       Routes,
		Forward:      Forward,
		Return:       Return,
		MaxBody:      MaxBody,
		Check:        Check,
		CheckHeader:  CheckHeader,
		Usage:        Usage,
		OutputCaps:   OutputCaps,
		Error:        ErrorBody,
		PolicyStatus: PolicyStatus,
	}
	b.Credential = func(ctx context.Context) (egress.Credential, error) {
		tok, err := src.Token(ctx)
		if err != nil {
			return nil, err
		}
		if kind == APIKey {
			return egress.Credential{{Name: "X-Api-Key", Value: tok}}, nil
		}
		return egress.Credential{{Name: "Authorization", Value: cred.NewSecret("Bearer " + tok.Reveal())}}, nil
	}
	if kind == Subscription {
		b.Adjust = AddOAuthBeta
		if r, ok := src.(cred.Refresher); ok {
			b.Refresh = func(ctx context.Context, stale egress.Credential) (egress.Credential, error) {
				old, _ := strings.CutPrefix(stale.Get("Authorization").Reveal(), "Bearer ")
				tok, err := r.Refresh(ctx, cred.NewSecret(old))
				if err != nil {
					return nil, err
				}
				return egress.Credential{{Name: "Authorization", Value: cred.NewSecret("Bearer " + tok.Reveal())}}, nil
			}
		}
	}
	return b
}

// AddOAuthBeta makes sure a subscription request names the OAuth beta the
// API requires for a bearer token (the genuine client already sends it;
// another client in an `aisan run` box may not).
func AddOAuthBeta(out, _ http.Header, _ egress.Credential) {
	for _, v := range out.Values("Anthropic-Beta") {
		for _, b := range strings.Split(v, ",") {
			if strings.TrimSpace(b) == oauthBeta {
				return
			}
		}
	}
	out.Add("Anthropic-Beta", oauthBeta)
}

// PolicyStatus is the status of every refusal of aisan's own that no
// retry or login can change (policy, budget, host credential), for the
// Claude CLI on the Messages API and on Vertex AI. Measured with claude
// 2.1.332 through a strict box: a 402 it shows as "API Error: 402" and
// the message, and sends once, whatever the error type; a 403 it shows
// as a failed login ("Please run /login"); a 400 or a 422 it sends six
// times; a 404 it reads as a model that does not exist and a 413 as its
// own size message, both without our message.
const PolicyStatus = http.StatusPaymentRequired

// ErrorBody is the Messages API's error shape.
func ErrorBody(status int, kind egress.Kind, msg string) []byte {
	t := "permission_error"
	switch kind {
	case egress.KindAuth, egress.KindCredential:
		t = "authentication_error"
	case egress.KindTooLarge:
		t = "request_too_large"
	case egress.KindRate:
		t = "rate_limit_error"
	case egress.KindUpstream:
		t = "api_error"
	case egress.KindBudget:
		t = "billing_error"
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": t, "message": msg}})
	return b
}

// Check is the body policy for /v1/messages and /v1/messages/count_tokens:
// the table of Policy.
func Check(_ egress.Route, body map[string]any) error { return Policy().Check(body) }

// CheckHeader is the header policy of every route: each anthropic-beta
// value must be one of Betas.
func CheckHeader(_ egress.Route, values func(string) []string) error {
	return Policy().CheckHeaders(values)
}

// BoxEnv is the environment the box's Claude needs to send its model calls
// to baseURL with a placeholder credential of the right kind. token is the
// per-box token of a --net box, or "" for the fixed placeholder;
// subscriptionType is the host login's plan (ignored for APIKey).
func BoxEnv(baseURL, token string, kind Kind, subscriptionType string) []string {
	if token == "" {
		token = Placeholder
	}
	env := []string{"ANTHROPIC_BASE_URL=" + baseURL}
	if kind == APIKey {
		env = append(env, "ANTHROPIC_API_KEY="+token)
	} else {
		env = append(env, "CLAUDE_CODE_OAUTH_TOKEN="+token)
		if subscriptionType != "" {
			env = append(env, "CLAUDE_CODE_SUBSCRIPTION_TYPE="+subscriptionType)
		}
	}
	return append(env,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	)
}

// APIKeySeed is what the box's .claude.json must hold (merged in) so the
// client uses the placeholder key without asking: the CLI remembers an
// approved key by its last 20 characters.
func APIKeySeed(key string) map[string]any {
	if len(key) > 20 {
		key = key[len(key)-20:]
	}
	return map[string]any{"customApiKeyResponses": map[string]any{"approved": []string{key}, "rejected": []string{}}}
}
