package strictbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/strictbox/held"
)

// services is what serves one strict box from the host: its built-in
// endpoints' egress services and, when the box ends, the collection of
// its held set (what it changed of what host tools run).
type services struct {
	egress *boxEgress
	// eps are the built-in endpoints, runs their services, one each.
	eps  []jail.Endpoint
	runs []*endpointRun
	// held is the box's set of copies of what host tools run (held),
	// collected when it ends; "" for none.
	held string
	slot string
	say  jail.Say
}

// kept is what a keeper needs to serve a box's endpoints again, besides
// their listening sockets: the launch's credential mode, the --net box's
// per-box token (a placeholder the box holds, never a credential: the
// keeper reads those from the host as the wrapper did), the endpoints in
// the sockets' order, and the held set to collect.
type kept struct {
	APIKey    bool            `json:"api_key,omitempty"`
	Token     string          `json:"token,omitempty"`
	Endpoints []jail.Endpoint `json:"endpoints,omitempty"`
	Held      string          `json:"held,omitempty"`
	Slot      string          `json:"slot,omitempty"`
}

// Env are the endpoints' variables for the agent (addresses picked at
// start, per-box tokens, the clients' routing).
func (s *services) Env() []string {
	var env []string
	for _, run := range s.runs {
		env = append(env, run.env...)
	}
	return env
}

// Keep hands the keeper duplicates of the listening sockets, one per
// endpoint in order, and the state to serve them with. It runs with the
// host's environment: its egress services find the credentials, CA
// store and overrides where this process found them.
func (s *services) Keep() (launch.Kept, error) {
	var files []*os.File
	for _, run := range s.runs {
		f, err := egress.ListenerFile(run.ln)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return launch.Kept{}, err
		}
		files = append(files, f)
	}
	state, err := json.Marshal(kept{APIKey: s.egress.apiKey, Token: s.egress.token, Endpoints: s.eps, Held: s.held, Slot: s.slot})
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return launch.Kept{}, err
	}
	return launch.Kept{Mode: modeName, Files: files, State: state, Env: os.Environ()}, nil
}

// Drain ends this process's service once the keeper serves the box:
// nothing new is accepted, requests in flight are answered until ctx is
// done, and the socket files stay for the keeper, which removes them with
// the slot's run directory.
func (s *services) Drain(ctx context.Context) {
	var wg sync.WaitGroup
	for _, run := range s.runs {
		egress.Disown(run.ln)
		wg.Go(func() { run.drain(ctx) })
	}
	wg.Wait()
	s.sayRefusals()
}

// Stop ends the services at once, after the box, and collects its held
// set: what it changed of what host tools run is held for review.
func (s *services) Stop() {
	stopAll(s.runs)
	s.sayRefusals()
	if s.held == "" {
		return
	}
	r, err := held.End(s.held)
	if err != nil {
		s.say(jail.Warning, fmt.Sprintf("collecting what the box changed of what host tools run (%s): %v; 'aisan review' lists it", s.held, err))
		return
	}
	if len(r.Files) > 0 {
		m, _ := held.ReadManifest(s.held)
		s.say(jail.Warning, r.Summary(m.Repo, s.slot))
	}
	for _, k := range r.Kept {
		s.say(jail.Warning, fmt.Sprintf("%s was made empty for the box's run and the host wrote there since; it is left as it is", k))
	}
}

// sayRefusals says, once the services are done, how many requests they
// refused, the commonest reason and where the whole list is.
func (s *services) sayRefusals() {
	if line := s.egress.refusals.Summary(); line != "" {
		s.say(jail.Note, line)
	}
}

// Resume is a keeper's Serve: the box's endpoints served again on the
// sockets the wrapper served them on (k.Files, in the endpoints' order;
// they stay the caller's), with the state its Keep gave.
func (b *Box) Resume(k launch.Kept, say jail.Say) (launch.Services, error) {
	var st kept
	if err := json.Unmarshal(k.State, &st); err != nil {
		return nil, fmt.Errorf("the kept egress state: %w", err)
	}
	if len(k.Files) != len(st.Endpoints) {
		return nil, fmt.Errorf("%d sockets for %d egress endpoints", len(k.Files), len(st.Endpoints))
	}
	m := newBoxEgress(st.APIKey)
	m.token = st.Token
	var lns []net.Listener
	for i, f := range k.Files {
		ln, err := egress.InheritListener(f, st.Endpoints[i].Socket)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		// The socket files stay the wrapper's until the keeper has the
		// slot (if this fails, the wrapper goes on serving through them);
		// the slot directory's removal at the box's end takes them.
		egress.Disown(ln)
		lns = append(lns, ln)
	}
	runs, err := serveEgress(context.Background(), m, st.Endpoints, lns)
	if err != nil {
		for _, l := range lns {
			l.Close()
		}
		return nil, err
	}
	return &services{egress: m, eps: st.Endpoints, runs: runs, held: st.Held, slot: st.Slot, say: say}, nil
}
