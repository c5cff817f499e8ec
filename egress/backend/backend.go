// Package backend builds an egress backend by name ("anthropic", "codex",
// "openai", "openai-compatible:<provider>") from the host's configuration:
// where its credential lives, which upstream it talks to, and what the box
// needs to reach it. It is the one place that reads the host environment
// for egress, so the backends themselves stay pure.
//
// # Host configuration
//
//	backend            credential (first found)                         upstream (override)
//	anthropic          $CLAUDE_CONFIG_DIR or ~/.claude/.credentials.json  https://api.anthropic.com (AISAN_ANTHROPIC_UPSTREAM)
//	anthropic --api-key AISAN_ANTHROPIC_KEY_COMMAND, AISAN_ANTHROPIC_KEY_FILE, ANTHROPIC_API_KEY
//	vertex             Google ADC: $GOOGLE_APPLICATION_CREDENTIALS or     https://REGION-aiplatform.googleapis.com
//	                   ~/.config/gcloud/application_default_credentials  (AISAN_VERTEX_UPSTREAM); project and region
//	                   .json, as AISAN_VERTEX_IMPERSONATE when set        from ANTHROPIC_VERTEX_PROJECT_ID and
//	                                                                     CLOUD_ML_REGION, as for claude
//	codex              $CODEX_HOME or ~/.codex/auth.json (ChatGPT mode)   https://chatgpt.com/backend-api/codex (AISAN_CODEX_UPSTREAM)
//	openai             AISAN_OPENAI_KEY_COMMAND, AISAN_OPENAI_KEY_FILE,   https://api.openai.com/v1 (AISAN_OPENAI_UPSTREAM)
//	                   OPENAI_API_KEY, the key in Codex's auth.json
//	openai-compatible:P the "api" entry P in $XDG_DATA_HOME/opencode/    P's baseURL in the host's opencode config,
//	                   auth.json                                         else opencode's cached catalog entry P
//	                                                                     (AISAN_OPENCODE_UPSTREAM_<P>)
//
// An opencode box also gets the host config's model (when it is one of
// P's) and P's declaration from that config, without its options and
// headers (see opencode.go).
//
// A key command is split into words like a shell would (no shell runs it)
// and prints the key, or {"token": …, "expiry": <unix seconds>}. The
// Claude and Codex logins are refreshed on the host before they expire,
// at AISAN_ANTHROPIC_TOKEN_URL and AISAN_CODEX_TOKEN_URL when those are
// set; Google access tokens are minted at AISAN_VERTEX_TOKEN_URL and
// AISAN_VERTEX_IAM_URL when set. Every upstream must be https; its certificate is checked against
// the system store (SSL_CERT_FILE and SSL_CERT_DIR apply).
package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/openai"
	"github.com/aisan-dev/aisan/egress/vertex"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// Options are the host facts a backend is built from.
type Options struct {
	// APIKey selects an API key over the subscription login (anthropic).
	APIKey bool
	// Home is the host's home directory ("" means os.UserHomeDir).
	Home string
	// Getenv reads the host environment (nil means os.Getenv).
	Getenv func(string) string
	// Model is the model id within an opencode provider ("" takes the
	// host config's model when it is one of the provider's, else
	// opencode's default).
	Model string
	// Transport reaches token endpoints for refreshes (nil means egress.NewTransport()).
	Transport http.RoundTripper
}

// Spec is a built backend and what the launcher needs to wire a box to it.
type Spec struct {
	Backend *egress.Backend
	// EnvName is AISAN_EGRESS_<NAME>, the box variable holding the base URL.
	EnvName string
	// BoxEnv is the environment routing the matching client to baseURL with
	// a placeholder credential (token, the per-box token of a --net box,
	// or "" for the fixed placeholder). It includes EnvName.
	BoxEnv func(baseURL, token string) []string
	// ClientArgs are extra client arguments (codex's -c overrides), or nil.
	ClientArgs func(baseURL string) []string
	// Config is the client's configuration snippet (codex config.toml,
	// opencode JSON), or nil.
	Config func(baseURL string) string
	// Seed is JSON to merge into the box's client state before start (the
	// Claude API-key approval), or nil.
	Seed func(token string) map[string]any
	// Credential names where the credential comes from (a path or a
	// variable name; never its value), for explain and errors.
	Credential string
}

// EnvName is the box variable for backend name: AISAN_EGRESS_ and the name
// in upper case with '-' and ':' as '_'.
func EnvName(name string) string {
	return "AISAN_EGRESS_" + strings.NewReplacer("-", "_", ":", "_").Replace(strings.ToUpper(name))
}

var providerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`) })

// defaults fills in what o leaves to the process.
func (o Options) defaults() (Options, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return o, fmt.Errorf("no home directory: %w", err)
		}
		o.Home = h
	}
	if o.Transport == nil {
		o.Transport = egress.NewTransport()
	}
	return o, nil
}

// upstream parses the backend's upstream: the override in envVar, else def.
func (o Options) upstream(envVar, def string) (*url.URL, error) {
	raw := def
	if v := o.Getenv(envVar); v != "" {
		raw = v
	}
	return egress.ParseUpstream(envVar, raw)
}

func (o Options) dir(envVar, def string) string {
	if v := o.Getenv(envVar); v != "" {
		return v
	}
	return filepath.Join(o.Home, def)
}

func (o Options) client() *http.Client { return &http.Client{Transport: o.Transport} }

func newAnthropic(o Options) (*Spec, error) {
	up, err := o.upstream("AISAN_ANTHROPIC_UPSTREAM", anthropic.DefaultUpstream)
	if err != nil {
		return nil, err
	}
	if o.APIKey {
		src, from, err := cred.KeyFromEnv(o.Getenv, "AISAN_ANTHROPIC_KEY_COMMAND", "AISAN_ANTHROPIC_KEY_FILE", "ANTHROPIC_API_KEY", nil)
		if err != nil {
			return nil, err
		}
		return &Spec{
			Backend:    anthropic.New(up, anthropic.APIKey, src),
			BoxEnv:     func(u, t string) []string { return anthropic.BoxEnv(u, t, anthropic.APIKey, "") },
			Seed:       func(t string) map[string]any { return anthropic.APIKeySeed(placeholder(t, anthropic.Placeholder)) },
			Credential: from,
		}, nil
	}
	login := &cred.ClaudeOAuth{Dir: o.dir("CLAUDE_CONFIG_DIR", ".claude"), HTTP: o.client()}
	if v := o.Getenv("AISAN_ANTHROPIC_TOKEN_URL"); v != "" {
		if _, err := egress.ParseUpstream("AISAN_ANTHROPIC_TOKEN_URL", v); err != nil {
			return nil, err
		}
		login.TokenURL = v
	}
	plan, err := login.SubscriptionType()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no Claude login at %s: log in with `claude` on the host, or pass --api-key to use an API key", login.Path())
		}
		return nil, err
	}
	return &Spec{
		Backend:    anthropic.New(up, anthropic.Subscription, login),
		BoxEnv:     func(u, t string) []string { return anthropic.BoxEnv(u, t, anthropic.Subscription, plan) },
		Credential: login.Path(),
	}, nil
}

func newVertex(o Options) (*Spec, error) {
	adc := &vertex.ADC{
		Path:        vertex.DefaultADCPath(o.Home, o.Getenv),
		Impersonate: o.Getenv("AISAN_VERTEX_IMPERSONATE"),
		Transport:   o.Transport,
	}
	for _, v := range []struct {
		name string
		to   *string
	}{{"AISAN_VERTEX_TOKEN_URL", &adc.TokenURL}, {"AISAN_VERTEX_IAM_URL", &adc.IAMURL}} {
		if raw := o.Getenv(v.name); raw != "" {
			if _, err := egress.ParseUpstream(v.name, raw); err != nil {
				return nil, err
			}
			*v.to = raw
		}
	}
	typ, project, quota, err := adc.Info()
	if err != nil {
		return nil, err
	}
	c := vertex.Config{Project: o.Getenv("ANTHROPIC_VERTEX_PROJECT_ID"), Region: o.Getenv("CLOUD_ML_REGION")}
	for _, p := range []string{o.Getenv("GOOGLE_CLOUD_PROJECT"), quota, project} {
		if c.Project == "" {
			c.Project = p
		}
	}
	if c.Region == "" {
		c.Region = "global"
	}
	if typ == "authorized_user" {
		c.QuotaProject = quota
	}
	if err := c.Valid(); err != nil {
		return nil, err
	}
	up, err := o.upstream("AISAN_VERTEX_UPSTREAM", vertex.DefaultUpstream(c.Region))
	if err != nil {
		return nil, err
	}
	from := adc.Path
	if adc.Impersonate != "" {
		from += " as " + adc.Impersonate
	}
	return &Spec{
		Backend:    vertex.New(up, c, &cred.Minted{Mint: adc.Mint}),
		BoxEnv:     func(u, t string) []string { return vertex.BoxEnv(u, t, c) },
		Credential: from,
	}, nil
}

func placeholder(tok, def string) string {
	if tok == "" {
		return def
	}
	return tok
}

func codexClient(s *Spec) *Spec {
	s.ClientArgs = openai.CodexConfigArgs
	s.Config = openai.CodexConfigTOML
	return s
}

func newCodex(o Options) (*Spec, error) {
	up, err := o.upstream("AISAN_CODEX_UPSTREAM", openai.DefaultCodexUpstream)
	if err != nil {
		return nil, err
	}
	login := &cred.CodexChatGPT{Home: o.dir("CODEX_HOME", ".codex"), HTTP: o.client()}
	if v := o.Getenv("AISAN_CODEX_TOKEN_URL"); v != "" {
		if _, err := egress.ParseUpstream("AISAN_CODEX_TOKEN_URL", v); err != nil {
			return nil, err
		}
		login.TokenURL = v
	}
	if err := login.Check(); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no Codex login at %s: log in with `codex login` on the host", login.Path())
		}
		return nil, err
	}
	return codexClient(&Spec{
		Backend:    openai.NewCodex(up, login),
		BoxEnv:     openai.CodexBoxEnv,
		Credential: login.Path(),
	}), nil
}

func newOpenAI(o Options) (*Spec, error) {
	up, err := o.upstream("AISAN_OPENAI_UPSTREAM", openai.DefaultOpenAIUpstream)
	if err != nil {
		return nil, err
	}
	home := o.dir("CODEX_HOME", ".codex")
	src, from, err := cred.KeyFromEnv(o.Getenv, "AISAN_OPENAI_KEY_COMMAND", "AISAN_OPENAI_KEY_FILE", "OPENAI_API_KEY", cred.CodexAPIKey{Home: home})
	if err != nil {
		return nil, err
	}
	if from == "" {
		// The last resort is read lazily like the others; check now that it
		// holds a key, so a host without one has no openai backend rather
		// than one that refuses every request.
		from = filepath.Join(home, "auth.json")
		if _, err := src.Token(context.Background()); err != nil {
			return nil, fmt.Errorf("no API key: set AISAN_OPENAI_KEY_COMMAND, AISAN_OPENAI_KEY_FILE or OPENAI_API_KEY, or log in to codex with an API key (%w)", err)
		}
	}
	return codexClient(&Spec{
		Backend:    openai.NewOpenAI(up, src),
		BoxEnv:     openai.OpenAIBoxEnv,
		Credential: from,
	}), nil
}

// providerVar is the upstream override for an opencode provider.
func providerVar(p string) string {
	return "AISAN_OPENCODE_UPSTREAM_" + strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToUpper(p))
}

func newCompatible(p string, o Options) (*Spec, error) {
	cfg, err := opencodeConfig(o)
	if err != nil {
		return nil, err
	}
	host, err := opencodeProviderOf(cfg, p)
	if err != nil {
		return nil, err
	}
	if o.Model != "" {
		host.client.Model = o.Model
	}
	v := providerVar(p)
	raw, from := o.Getenv(v), v
	if raw == "" && host.baseURL != "" {
		raw, from = host.baseURL, fmt.Sprintf("the baseURL of provider %q in opencode's config (%s overrides it)", p, v)
	}
	if raw == "" {
		raw, err = catalogAPI(filepath.Join(o.dir("XDG_CACHE_HOME", ".cache"), "opencode", "models.json"), p, v)
		if err != nil {
			return nil, err
		}
	}
	up, err := egress.ParseUpstream(from, raw)
	if err != nil {
		return nil, err
	}
	auth := cred.OpencodeKey{Path: opencodeAuthPath(o), Provider: p}
	if _, err := auth.Token(context.Background()); err != nil {
		return nil, err
	}
	client := host.client
	return &Spec{
		Backend:    openai.NewCompatible(p, up, auth, client.Models()),
		BoxEnv:     client.BoxEnv,
		Config:     client.Config,
		Credential: auth.Path,
	}, nil
}

// catalogAPI reads the provider's API base URL from opencode's cached
// model catalog (the models.dev format: {"<provider>": {"api": …, "npm":
// …}}); only OpenAI-compatible providers can be served.
func catalogAPI(path, p, envVar string) (string, error) {
	b, err := regfile.Read(path, 64<<20)
	if err != nil {
		return "", fmt.Errorf("no upstream for provider %q: set %s to its API base URL (opencode's catalog: %w)", p, envVar, err)
	}
	var cat map[string]struct {
		API string `json:"api"`
		NPM string `json:"npm"`
	}
	if err := json.Unmarshal(b, &cat); err != nil {
		return "", fmt.Errorf("opencode's catalog %s: %w", path, err)
	}
	e, ok := cat[p]
	switch {
	case !ok:
		return "", fmt.Errorf("provider %q is not in opencode's catalog %s: set %s to its API base URL", p, path, envVar)
	case e.NPM != "" && e.NPM != "@ai-sdk/openai-compatible":
		return "", fmt.Errorf("provider %q speaks %s, not the OpenAI-compatible API strict mode serves", p, e.NPM)
	case e.API == "":
		return "", fmt.Errorf("provider %q has no API URL in opencode's catalog %s: set %s", p, path, envVar)
	}
	return e.API, nil
}

// Start serves the backend on ln in the background (ln is an
// egress.ListenUnix socket, or egress.ListenLoopback with o.Token set for a
// --net box) and returns what a launcher needs: the running server, to
// stop or drain, and the box's environment for baseURL (the address the
// box's client dials).
func (s *Spec) Start(ln net.Listener, o egress.Options, baseURL string) (*Running, []string, error) {
	srv, err := egress.NewServer(s.Backend, o)
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	r := &Running{srv: srv, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		srv.Serve(ln)
	}()
	return r, s.BoxEnv(baseURL, o.Token), nil
}

// Running is a backend being served.
type Running struct {
	srv  *egress.Server
	ln   net.Listener
	done chan struct{}
}

// Stop ends it at once, open streams too.
func (r *Running) Stop() {
	r.srv.Close()
	r.ln.Close()
	<-r.done
}

// Drain ends it once the requests in flight are answered, or ctx is done.
func (r *Running) Drain(ctx context.Context) {
	r.srv.Drain(ctx)
	r.ln.Close()
	<-r.done
}
