package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/egress/reapi"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
)

// egressAuditPath is where a slot's egress decisions are logged: in the
// state dir, which no box can write, one JSON line each.
func egressAuditPath(slotName string) (string, error) {
	home, err := slot.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "egress", slotName+".jsonl"), nil
}

// refusals counts what this launch's egress refused, for the line its end
// prints (one aisan process launches one box).
var refusals = &audit.Tally{}

// openEgressAudit opens the slot's egress log for appending.
func openEgressAudit(slotName string) (*audit.File, error) {
	p, err := egressAuditPath(slotName)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("creating the egress log directory: %w", err)
	}
	return audit.Open(p)
}

// listenEndpoint listens on an endpoint's socket in the slot's run
// directory (created 0700 if needed), with egress.ListenUnix's rules.
func listenEndpoint(e jail.Endpoint) (net.Listener, error) {
	if e.Socket == "" {
		return nil, errors.New("this backend needs a box of its own network (no --net)")
	}
	if err := os.MkdirAll(filepath.Dir(e.Socket), 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(e.Socket), err)
	}
	return egress.ListenUnix(e.Socket)
}

// startHosts serves the host allow-list proxy (--allow-host) on the
// endpoint's socket, or on ln, inherited. Names are resolved here, on the
// host, through AISAN_RESOLVE's overrides first; the box has no DNS of
// its own.
func startHosts(ctx context.Context, e jail.Endpoint, ln net.Listener) (*endpointRun, error) {
	list, err := hostproxy.ParseList(strings.Fields(e.Param))
	if err != nil {
		return nil, err
	}
	var resolver hostproxy.Resolver = hostproxy.HostResolver
	if v := os.Getenv("AISAN_RESOLVE"); v != "" {
		o, err := hostproxy.ParseResolve(v)
		if err != nil {
			return nil, fmt.Errorf("AISAN_RESOLVE: %w", err)
		}
		resolver = o.Then(hostproxy.HostResolver)
	}
	local, err := hostproxy.LocalAddrs()
	if err != nil {
		return nil, fmt.Errorf("listing this host's addresses: %w", err)
	}
	env, err := hostproxy.BoxEnv("http://127.0.0.1:" + strconv.Itoa(e.Port))
	if err != nil {
		return nil, err
	}
	log, err := openEgressAudit(e.Slot)
	if err != nil {
		return nil, err
	}
	if ln == nil {
		if ln, err = listenEndpoint(e); err != nil {
			log.Close()
			return nil, err
		}
	}
	p := hostproxy.New(hostproxy.Config{Allow: list, Resolver: resolver, Local: local, Audit: refusals.Wrap(e.Slot, log)})
	go p.Serve(ln)
	return &endpointRun{
		env: env, ln: ln,
		stop:  func() { p.Close(); log.Close() },
		drain: func(ctx context.Context) { p.Drain(ctx); log.Close() },
	}, nil
}

// startGRPC serves a REAPI (reapi=FILE) or any gRPC allow-list
// (grpc:NAME=FILE) endpoint: prior-knowledge h2c from the box, checked per
// stream, to the configured TLS upstream with the host's credential.
func startGRPC(generic bool) egressStarter {
	return func(ctx context.Context, e jail.Endpoint, ln net.Listener) (*endpointRun, error) {
		name := "reapi"
		if generic {
			name = strings.TrimPrefix(e.Name, "grpc:")
		}
		if e.Socket == "" {
			return nil, fmt.Errorf("--egress %s with --net is not supported yet; drop --net (the box reaches it through its own loopback)", e.Name)
		}
		cfg, err := loadEgressFile(name, generic, e.Param)
		if err != nil {
			return nil, err
		}
		src, err := cfg.Source()
		if err != nil {
			return nil, err
		}
		log, err := openEgressAudit(e.Slot)
		if err != nil {
			return nil, err
		}
		srv, err := reapi.New(cfg, reapi.Options{Authority: "127.0.0.1:" + strconv.Itoa(e.Port), Audit: refusals.Wrap(e.Slot, log), Source: src})
		if err != nil {
			log.Close()
			return nil, err
		}
		if ln == nil {
			if ln, err = listenEndpoint(e); err != nil {
				srv.Close()
				log.Close()
				return nil, err
			}
		}
		go srv.Serve(ln)
		return &endpointRun{
			ln:    ln,
			stop:  func() { srv.Close(); log.Close() },
			drain: func(ctx context.Context) { srv.Drain(ctx); log.Close() },
		}, nil
	}
}

// egressStarter serves one built-in backend: on the endpoint's socket
// (in the slot's 0700 run directory), or, when e.Socket is "" (--net), on
// the host's loopback with a per-box token; or, in a keeper, on ln, the
// listener inherited from the wrapper. The run's env are KEY=VALUE lines
// for the agent (the address, the token, the client's routing
// variables); they reach it through a 0600 file, never an argv. This
// table is where the egress package plugs in: cmd/aisan is the only place
// that sees both sides.
type egressStarter func(ctx context.Context, e jail.Endpoint, ln net.Listener) (*endpointRun, error)

// endpointRun is one endpoint being served.
type endpointRun struct {
	env []string
	// ln is what it serves on.
	ln net.Listener
	// stop ends it at once; drain once the requests in flight are
	// answered, or its context is done.
	stop  func()
	drain func(context.Context)
}

// egressBackends maps each built-in backend to its host service. A name
// without a starter is recognised but refused as not built yet.
var egressBackends = map[string]egressStarter{
	"anthropic":         startModel,
	"vertex":            startModel,
	"codex":             startModel,
	"openai":            startModel,
	"openai-compatible": startModel,
	"reapi":             startGRPC(false),
	"grpc":              startGRPC(true),
	jail.HostsBackend:   startHosts,
}

// keptEgress is what a keeper needs to serve a box's endpoints again,
// besides the endpoints and their sockets: the launch's credential mode
// and the --net box's per-box token (a placeholder the box holds, not a
// credential).
type keptEgress struct {
	APIKey bool   `json:"api_key,omitempty"`
	Token  string `json:"token,omitempty"`
}

// serveEgress starts the host service of every endpoint, on the listener
// of the same index in lns when given; on failure it stops what it
// started.
func serveEgress(ctx context.Context, eps []jail.Endpoint, lns []net.Listener) ([]*endpointRun, error) {
	var runs []*endpointRun
	for i, e := range eps {
		start := egressBackends[e.Backend]
		var err error
		var run *endpointRun
		if start == nil {
			err = fmt.Errorf("--egress %s: %w", e.Name, jail.ErrNoBackend)
		} else {
			var ln net.Listener
			if lns != nil {
				ln = lns[i]
			}
			if run, err = start(ctx, e, ln); err != nil {
				err = fmt.Errorf("starting the %s egress backend: %w", e.Name, err)
			}
		}
		if err != nil {
			stopAll(runs)
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// stopAll stops runs at once, the last started first.
func stopAll(runs []*endpointRun) {
	for i := len(runs) - 1; i >= 0; i-- {
		runs[i].stop()
	}
}

// startEgress starts the host service of every built-in endpoint, before
// the box starts.
func startEgress(ctx context.Context, eps []jail.Endpoint) (*jail.EgressRun, error) {
	runs, err := serveEgress(ctx, eps, nil)
	if err != nil {
		return nil, err
	}
	r := &jail.EgressRun{
		Stop: func() { stopAll(runs) },
		Handover: func() ([]*os.File, []byte, func(context.Context), error) {
			var files []*os.File
			for _, run := range runs {
				f, err := egress.ListenerFile(run.ln)
				if err != nil {
					for _, f := range files {
						f.Close()
					}
					return nil, nil, nil, err
				}
				files = append(files, f)
			}
			state, err := json.Marshal(keptEgress{APIKey: models.apiKey, Token: models.token})
			if err != nil {
				return nil, nil, nil, err
			}
			drain := func(ctx context.Context) {
				var wg sync.WaitGroup
				for _, run := range runs {
					egress.Disown(run.ln)
					wg.Go(func() { run.drain(ctx) })
				}
				wg.Wait()
			}
			return files, state, drain, nil
		},
	}
	for _, run := range runs {
		r.Env = append(r.Env, run.env...)
	}
	return r, nil
}

// resumeEgress is a keeper's side of startEgress: the same endpoints,
// served on the sockets the wrapper served them on.
func resumeEgress(ctx context.Context, eps []jail.Endpoint, files []*os.File, state []byte) (func(), error) {
	var st keptEgress
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, fmt.Errorf("the kept egress state: %w", err)
	}
	if len(files) != len(eps) {
		return nil, fmt.Errorf("%d sockets for %d egress endpoints", len(files), len(eps))
	}
	models.apiKey, models.token = st.APIKey, st.Token
	var lns []net.Listener
	for i, f := range files {
		ln, err := egress.InheritListener(f, eps[i].Socket)
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
	runs, err := serveEgress(ctx, eps, lns)
	if err != nil {
		for _, l := range lns {
			l.Close()
		}
		return nil, err
	}
	return func() { stopAll(runs) }, nil
}
