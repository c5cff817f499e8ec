package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/backend"
	"github.com/aisan-dev/aisan/jail"
)

// modelEgress is one launch's model backends: which to serve, with what
// credential mode, and the per-box token of a --net box. One aisan process
// launches one box, so it is kept for the process.
type modelEgress struct {
	apiKey bool
	// token is the per-box token a --net box's client sends as its
	// placeholder credential; "" for a box without network, whose 0600
	// socket is the authentication.
	token string
	specs map[string]*backend.Spec
	// early are the host loopback listeners of a --net launch's endpoints
	// whose client takes its address as an option (codex's -c base_url),
	// opened at plan time so the option can name the port; by endpoint name.
	early map[string]net.Listener
	// explain is set for explain, which listens on nothing.
	explain bool
	// kind is the launch's agent; only codex takes client options.
	kind jail.Kind
}

var models = &modelEgress{specs: map[string]*backend.Spec{}, early: map[string]net.Listener{}}

// addressInArgs reports whether backend's client is routed by options
// that name the endpoint's address.
func addressInArgs(backend string) bool { return backend == "codex" || backend == "openai" }

// backendName is the egress/backend name of an endpoint.
func backendName(e jail.Endpoint) string {
	if e.Param != "" && e.Backend == "openai-compatible" {
		return e.Backend + ":" + e.Param
	}
	return e.Backend
}

// spec builds (once) the backend called name from the host's setup.
func (m *modelEgress) spec(name string) (*backend.Spec, error) {
	if s, ok := m.specs[name]; ok {
		return s, nil
	}
	s, err := backend.New(name, backend.Options{APIKey: m.apiKey && name == "anthropic"})
	if err != nil {
		return nil, err
	}
	m.specs[name] = s
	return s, nil
}

// plan decides the model endpoints of a strict launch: those the user
// named with --egress, and for an agent launcher the one its client
// needs, when the host has a credential for it (without one the box
// starts all the same, and says it has no model).
func (m *modelEgress) plan(kind jail.Kind, f *strictFlags, r *jail.StrictRequest, explainOnly bool) error {
	m.apiKey = f.apiKey
	if f.net {
		var b [24]byte
		rand.Read(b[:])
		m.token = "aisan-box-" + hex.EncodeToString(b[:])
	}
	has := func(backend string) bool {
		return slices.ContainsFunc(r.Egress, func(e jail.EgressRequest) bool { return e.Backend == backend })
	}
	var candidates []jail.EgressRequest
	switch kind {
	case jail.KindClaude:
		switch {
		case f.vertex && !has("vertex"):
			candidates = []jail.EgressRequest{{Name: "vertex", Backend: "vertex"}}
		case !f.vertex && !has("anthropic") && !has("vertex"):
			candidates = []jail.EgressRequest{{Name: "anthropic", Backend: "anthropic"}}
		}
	case jail.KindCodex:
		if !has("codex") && !has("openai") {
			candidates = []jail.EgressRequest{{Name: "codex", Backend: "codex"}, {Name: "openai", Backend: "openai"}}
		}
	case jail.KindOpencode:
		if !has("openai-compatible") {
			if p := opencodeProvider(); p != "" {
				candidates = []jail.EgressRequest{{Name: "openai-compatible:" + p, Backend: "openai-compatible", Param: p}}
			}
		}
	}
	var why error
	for _, c := range candidates {
		if _, err := m.spec(backendName(jail.Endpoint{Backend: c.Backend, Param: c.Param})); err != nil {
			why = err
			continue
		}
		r.Egress = append(r.Egress, c)
		why = nil
		break
	}
	if why != nil && !explainOnly {
		// explain shows the endpoints the box gets; a launch says why
		// its agent has none.
		fmt.Fprintf(os.Stderr, "aisan: note: the box has no model endpoint: %v\n", why)
	}
	if f.apiKey {
		r.ClaudeSeed = anthropic.APIKeySeed(placeholderOr(m.token, anthropic.Placeholder))
	}
	m.explain, m.kind = explainOnly, kind
	if f.net && !explainOnly && kind == jail.KindCodex {
		for _, e := range r.Egress {
			if !addressInArgs(e.Backend) {
				continue
			}
			ln, err := egress.ListenLoopback()
			if err != nil {
				return err
			}
			m.early[e.Name] = ln
		}
	}
	r.ClientArgs = m.clientArgs
	return nil
}

func placeholderOr(tok, def string) string {
	if tok == "" {
		return def
	}
	return tok
}

// clientArgs are the client options that route an agent to its planned
// endpoints (Codex's custom provider): the in-box port, or with --net the
// host loopback address plan listened on (explain shows where it goes).
func (m *modelEgress) clientArgs(eps []jail.Endpoint) []string {
	if m.kind != jail.KindCodex {
		return nil
	}
	var args []string
	for _, e := range eps {
		if !addressInArgs(e.Backend) {
			continue
		}
		addr := "127.0.0.1:" + strconv.Itoa(e.Port)
		if e.Port == 0 {
			ln, ok := m.early[e.Name]
			switch {
			case ok:
				addr = ln.Addr().String()
			case m.explain:
				addr = "127.0.0.1:<port picked at launch>"
			default:
				continue
			}
		}
		s, err := m.spec(backendName(e))
		if err != nil || s.ClientArgs == nil {
			continue
		}
		args = append(args, s.ClientArgs("http://"+addr)...)
	}
	return args
}

// startModel serves a model backend for the box: on its endpoint's 0600
// socket, or, with --net, on a host loopback port that requires the
// per-box token; or on ln, inherited.
func startModel(ctx context.Context, e jail.Endpoint, ln net.Listener) (*endpointRun, error) {
	s, err := models.spec(backendName(e))
	if err != nil {
		return nil, err
	}
	egress.OneProc()
	log, err := openEgressAudit(e.Slot)
	if err != nil {
		return nil, err
	}
	var baseURL string
	switch {
	case e.Socket != "":
		if ln == nil {
			ln, err = listenEndpoint(e)
		}
		baseURL = "http://127.0.0.1:" + strconv.Itoa(e.Port)
	case ln != nil:
	default:
		var ok bool
		if ln, ok = models.early[e.Name]; ok {
			delete(models.early, e.Name)
		} else {
			ln, err = egress.ListenLoopback()
		}
	}
	if err != nil {
		log.Close()
		return nil, err
	}
	if baseURL == "" {
		baseURL = "http://" + ln.Addr().String()
	}
	run, env, err := s.Start(ln, egress.Options{Token: models.token, Audit: refusals.Wrap(e.Slot, log)}, baseURL)
	if err != nil {
		log.Close()
		return nil, err
	}
	return &endpointRun{
		env: env, ln: ln,
		stop:  func() { run.Stop(); log.Close() },
		drain: func(ctx context.Context) { run.Drain(ctx); log.Close() },
	}, nil
}

// opencodeProvider picks the opencode provider a strict box serves: one
// with an API key in opencode's auth.json (OAuth entries cannot be served:
// the box would need the token), the host model's when there are several.
// Otherwise the user names one with --egress openai-compatible:<provider>.
func opencodeProvider() string {
	p, candidates, err := backend.OpencodeProvider(backend.Options{})
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "aisan: note: %v\n", err)
	case len(candidates) > 1:
		fmt.Fprintf(os.Stderr, "aisan: note: opencode has API keys for %v; name one with --egress openai-compatible:<provider>\n", candidates)
	}
	return p
}
