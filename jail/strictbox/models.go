package strictbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/backend"
	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/jail"
)

// boxEgress is one box's egress state: its model backends (which to
// serve, with what credential mode), the per-box token of a --net box,
// and the tally of what its services refused. It belongs to the box's
// [Box], one per launch, or to the keeper that took it over.
type boxEgress struct {
	apiKey bool
	// token is the per-box token a --net box's client sends as its
	// placeholder credential; "" for a box without network, whose 0600
	// socket is the authentication.
	token string
	specs map[string]*backend.Spec
	// early are the host loopback listeners of a --net launch's endpoints
	// whose client takes its address as an option (codex's -c base_url),
	// opened when the box is prepared so the option can name the port; by
	// endpoint name.
	early map[string]net.Listener
	// refusals counts what the services refused, for the line said when
	// they end.
	refusals *audit.Tally
	// steer is what may change while the box runs: its budget and rate
	// (shared by its model servers) and its host allow-list.
	steer *steer
	// live is the host allow-list a keeper takes over, grants included;
	// nil serves the launch's.
	live []hostproxy.Entry
}

func newBoxEgress(apiKey bool, s *steer) *boxEgress {
	return &boxEgress{apiKey: apiKey, specs: map[string]*backend.Spec{}, early: map[string]net.Listener{}, refusals: &audit.Tally{}, steer: s}
}

// modelName is the egress/backend name of an endpoint.
func modelName(e jail.Endpoint) string {
	b, _ := backend.Lookup(e.Backend)
	return b.FullName(e.Param)
}

// spec builds (once) the backend called name from the host's setup.
func (m *boxEgress) spec(name string) (*backend.Spec, error) {
	if s, ok := m.specs[name]; ok {
		return s, nil
	}
	base, _, _ := strings.Cut(name, ":")
	b, _ := backend.Lookup(base)
	s, err := backend.New(name, backend.Options{APIKey: m.apiKey && b.APIKey})
	if err != nil {
		return nil, err
	}
	m.specs[name] = s
	return s, nil
}

// plan adds to reqs the model endpoint the agent kind's client needs,
// when the user named none for it and the host has a credential for one
// (without one the box starts all the same, and a launch says why it has
// no model), and gives the box its per-box token (with the host network)
// and the Claude state's seed. model, when set, is the backend the user
// chose over the agent's default (--vertex). dry (explain) listens on
// nothing.
func (m *boxEgress) plan(kind jail.Kind, model string, reqs []EgressRequest, net, dry bool, say jail.Say) ([]EgressRequest, map[string]any, error) {
	if net {
		var b [24]byte
		rand.Read(b[:])
		m.token = "aisan-box-" + hex.EncodeToString(b[:])
	}
	candidates := modelCandidates(kind, model, reqs, func() string { return opencodeProvider(say) })
	var why error
	for _, c := range candidates {
		if _, err := m.spec(modelName(jail.Endpoint{Backend: c.Backend, Param: c.Param})); err != nil {
			why = err
			continue
		}
		reqs = append(reqs, c)
		why = nil
		break
	}
	if why != nil && !dry {
		// explain shows the endpoints the box gets; a launch says why
		// its agent has none.
		say(jail.Note, fmt.Sprintf("the box has no model endpoint: %v", why))
	}
	var seed map[string]any
	if m.apiKey {
		seed = anthropic.APIKeySeed(placeholderOr(m.token, anthropic.Placeholder))
	}
	if net && !dry {
		for _, r := range reqs {
			if b, ok := backend.Lookup(r.Backend); !ok || !b.AddressInArgs || b.Serves != string(kind) {
				continue
			}
			ln, err := egress.ListenLoopback()
			if err != nil {
				return nil, nil, err
			}
			m.early[r.Name] = ln
		}
	}
	return reqs, seed, nil
}

// modelCandidates are the model endpoints an agent of kind may be given,
// in the order they are tried: the backends of the table that serve it
// by default, or the one the user chose (model); none when the user named
// one of them with --egress. provider picks opencode's provider, "" for
// none.
func modelCandidates(kind jail.Kind, model string, reqs []EgressRequest, provider func() string) []EgressRequest {
	named := func(b backend.Info) bool {
		return slices.ContainsFunc(reqs, func(r EgressRequest) bool { return r.Backend == b.Name })
	}
	var out []EgressRequest
	for _, b := range backend.Builtin {
		if b.Service != backend.Model || b.Serves != string(kind) || model != "" && b.Name != model {
			continue
		}
		if named(b) {
			// The user named this agent's backend.
			return nil
		}
		if model == "" && b.OnRequest {
			continue
		}
		r := EgressRequest{Name: b.Name, Backend: b.Name}
		if b.Param == backend.Provider {
			p := provider()
			if p == "" {
				continue
			}
			r.Name, r.Param = b.FullName(p), p
		}
		out = append(out, r)
	}
	return out
}

func placeholderOr(tok, def string) string {
	if tok == "" {
		return def
	}
	return tok
}

// clientArgs are the client options that route an agent of kind to its
// planned endpoints (Codex's custom provider): the in-box port, or with
// --net the host loopback address plan listened on (explain, dry, shows
// where it goes).
func (m *boxEgress) clientArgs(kind jail.Kind, eps []jail.Endpoint, dry bool) []string {
	var args []string
	for _, e := range eps {
		if b, ok := backend.Lookup(e.Backend); !ok || !b.AddressInArgs || b.Serves != string(kind) {
			continue
		}
		addr := "127.0.0.1:" + strconv.Itoa(e.Port)
		if e.Port == 0 {
			ln, ok := m.early[e.Name]
			switch {
			case ok:
				addr = ln.Addr().String()
			case dry:
				addr = "127.0.0.1:<port picked at launch>"
			default:
				continue
			}
		}
		s, err := m.spec(modelName(e))
		if err != nil || s.ClientArgs == nil {
			continue
		}
		args = append(args, s.ClientArgs("http://"+addr)...)
	}
	return args
}

// closeEarly closes the early listeners no service took (a launch that
// ended before its box was served).
func (m *boxEgress) closeEarly() {
	for name, ln := range m.early {
		ln.Close()
		delete(m.early, name)
	}
}

// startModel serves a model backend for the box: on its endpoint's 0600
// socket, or, with --net, on a host loopback port that requires the
// per-box token; or on ln, inherited.
func startModel(_ context.Context, m *boxEgress, e jail.Endpoint, ln net.Listener) (*endpointRun, error) {
	s, err := m.spec(modelName(e))
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
		if ln, ok = m.early[e.Name]; ok {
			delete(m.early, e.Name)
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
	run, env, err := s.Start(ln, egress.Options{Token: m.token, Audit: m.refusals.Wrap(e.Slot, log),
		Meter: m.steer.meter, Limiter: m.steer.limit, Slot: e.Slot}, baseURL)
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
func opencodeProvider(say jail.Say) string {
	p, candidates, err := backend.OpencodeProvider(backend.Options{})
	switch {
	case err != nil:
		say(jail.Note, err.Error())
	case len(candidates) > 1:
		say(jail.Note, fmt.Sprintf("opencode has API keys for %v; name one with --egress openai-compatible:<provider>", candidates))
	}
	return p
}
