// Package vertex is the egress backend for Anthropic's models on Google
// Cloud's Vertex AI, as the Claude CLI uses them (CLAUDE_CODE_USE_VERTEX):
// the routes (rawPredict and streamRawPredict, the model in the path),
// the Messages API's body policy in its Vertex form, a Google access token
// the host mints from the user's Application Default Credentials, and the
// box environment that routes the client to its in-box endpoint.
//
// # Rules
//
//   - The box holds no Google credential: its Claude skips Google auth
//     (CLAUDE_CODE_SKIP_VERTEX_AUTH) and the host attaches a short-lived
//     access token, minted from the user's ADC (an authorized user or a
//     service account key, optionally impersonating a service account),
//     cached and renewed ahead of its expiry in the background (see
//     cred.Minted), never while a request holds a lock.
//   - Only the host's project and region pass, and only Anthropic's
//     publisher: the upstream path is rebuilt from them and a model id
//     checked against a plain charset, so the box names nothing else.
//   - Bodies pass the Messages API's table with anthropic_version
//     (aisan explain --policy vertex); refusals answer in the Messages
//     API's error shape, which is what the client parses on Vertex too.
//   - No request that carries a credential (a mint, an impersonation, a
//     model call) follows a redirect.
package vertex

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/cred"
)

// Config is where a box's calls go: the host's Google Cloud project and
// the region its Claude models are served in.
type Config struct {
	Project, Region string
	// QuotaProject, when set, is sent as x-goog-user-project (the ADC's
	// quota project, which an authorized user's calls are billed to).
	QuotaProject string
}

// DefaultUpstream is Vertex AI's endpoint for region.
func DefaultUpstream(region string) string {
	switch region {
	case "global":
		return "https://aiplatform.googleapis.com"
	case "us", "eu":
		return "https://aiplatform." + region + ".rep.googleapis.com"
	}
	return "https://" + region + "-aiplatform.googleapis.com"
}

// idRE is what a project, region or model id may be.
var idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._@-]{0,127}$`) })

// Valid checks that c names a project and a region aisan can put in a path.
func (c Config) Valid() error {
	for _, v := range []struct{ what, val, env string }{{"project", c.Project, "ANTHROPIC_VERTEX_PROJECT_ID"}, {"region", c.Region, "CLOUD_ML_REGION"}} {
		if !idRE().MatchString(v.val) {
			if v.val == "" {
				return fmt.Errorf("no Google Cloud %s for Vertex AI: set %s as for claude on the host", v.what, v.env)
			}
			return fmt.Errorf("%s %q (%s) is not a Google Cloud %s id", v.env, v.val, v.what, v.what)
		}
	}
	return nil
}

// resolve matches the box's request against the host's project and region
// and rebuilds its path (the SDK's base URL ends in /v1).
func (c Config) resolve(method, path, query string) (egress.Route, bool) {
	prefix := "/v1/projects/" + c.Project + "/locations/" + c.Region + "/publishers/anthropic/models/"
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok || method != http.MethodPost || query != "" {
		return egress.Route{}, false
	}
	model, verb, ok := strings.Cut(rest, ":")
	if !ok || !idRE().MatchString(model) {
		return egress.Route{}, false
	}
	switch {
	case model == "count-tokens" && verb == "rawPredict":
	case model != "count-tokens" && (verb == "rawPredict" || verb == "streamRawPredict"):
	default:
		return egress.Route{}, false
	}
	return egress.Route{Method: http.MethodPost, Path: prefix + model + ":" + verb, Uncounted: model == "count-tokens"}, true
}

// Forward are the request headers passed upstream: the betas and the
// client's identity; Vertex takes the API version in the body.
var Forward = append([]string{"anthropic-beta", "x-app", "x-claude-code-session-id", "x-client-request-id", "user-agent", "accept"}, anthropic.SDKHeaders...)

// Return are the response headers passed back.
var Return = []string{
	"content-type", "content-length", "content-encoding", "retry-after", "retry-after-ms", "x-should-retry", "request-id", "x-request-id",
	"anthropic-ratelimit-*", "x-vertex-ai-*",
}

// New returns the backend: calls to upstream for c's project and region,
// authenticated with src's Google access token.
func New(upstream *url.URL, c Config, src *cred.Minted) *egress.Backend {
	headers := func(tok cred.Secret) egress.Credential {
		h := egress.Credential{{Name: "Authorization", Value: cred.NewSecret("Bearer " + tok.Reveal())}}
		if c.QuotaProject != "" {
			h = append(h, egress.Header{Name: "X-Goog-User-Project", Value: cred.NewSecret(c.QuotaProject)})
		}
		return h
	}
	return &egress.Backend{
		Name:     "vertex",
		Upstream: upstream,
		Resolve:  c.resolve,
		Forward:  Forward,
		Return:   Return,
		MaxBody:  anthropic.MaxBody,
		Check: func(_ egress.Route, body map[string]any) error {
			return anthropic.VertexPolicy().Check(body)
		},
		CheckHeader: func(_ egress.Route, values func(string) []string) error {
			return anthropic.VertexPolicy().CheckHeaders(values)
		},
		Credential: func(ctx context.Context) (egress.Credential, error) {
			tok, err := src.Token(ctx)
			if err != nil {
				return nil, err
			}
			return headers(tok), nil
		},
		Refresh: func(ctx context.Context, stale egress.Credential) (egress.Credential, error) {
			old, _ := strings.CutPrefix(stale.Get("Authorization").Reveal(), "Bearer ")
			tok, err := src.Refresh(ctx, cred.NewSecret(old))
			if err != nil {
				return nil, err
			}
			return headers(tok), nil
		},
		Usage:        anthropic.Usage,
		OutputCaps:   anthropic.OutputCaps,
		Error:        anthropic.ErrorBody,
		PolicyStatus: anthropic.PolicyStatus,
	}
}

// BoxEnv is the environment the box's Claude needs to send its model calls
// to baseURL on Vertex AI with no Google credential. token is the per-box
// token of a --net box, which the client then sends as its Authorization
// header ("" for a box without network).
func BoxEnv(baseURL, token string, c Config) []string {
	env := []string{
		"CLAUDE_CODE_USE_VERTEX=1",
		"CLAUDE_CODE_SKIP_VERTEX_AUTH=1",
		"ANTHROPIC_VERTEX_BASE_URL=" + strings.TrimRight(baseURL, "/") + "/v1",
		"ANTHROPIC_VERTEX_PROJECT_ID=" + c.Project,
		"CLOUD_ML_REGION=" + c.Region,
	}
	if token != "" {
		env = append(env, "ANTHROPIC_CUSTOM_HEADERS=Authorization: Bearer "+token)
	}
	return append(env,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	)
}
