package strictbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/backend"
	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/egress/reapi"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
)

// AuditPath is where a slot's egress decisions are logged: in the state
// dir, which no box can write, one JSON line each.
func AuditPath(slotName string) (string, error) {
	home, err := slot.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "egress", slotName+".jsonl"), nil
}

// openEgressAudit opens the slot's egress log for appending.
func openEgressAudit(slotName string) (*audit.File, error) {
	p, err := AuditPath(slotName)
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
func startHosts(_ context.Context, m *boxEgress, e jail.Endpoint, ln net.Listener) (*endpointRun, error) {
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
	p := hostproxy.New(hostproxy.Config{Allow: list, Live: m.live, Slot: e.Slot, Lapsed: m.steer.changed, Resolver: resolver, Local: local, Audit: m.refusals.Wrap(e.Slot, log)})
	m.steer.setHosts(p)
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
func startGRPC(_ context.Context, m *boxEgress, e jail.Endpoint, ln net.Listener) (*endpointRun, error) {
	b, _ := backend.Lookup(e.Backend)
	generic := b.Param == backend.NamedFile
	name := e.Backend
	if generic {
		name = strings.TrimPrefix(e.Name, e.Backend+":")
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
	srv, err := reapi.New(cfg, reapi.Options{Authority: "127.0.0.1:" + strconv.Itoa(e.Port), Audit: m.refusals.Wrap(e.Slot, log), Source: src})
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

// egressStarter serves one built-in backend: on the endpoint's socket
// (in the slot's 0700 run directory), or, when e.Socket is "" (--net), on
// the host's loopback with a per-box token; or, in a keeper, on ln, the
// listener inherited from the wrapper. The run's env are KEY=VALUE lines
// for the agent (the address, the token, the client's routing
// variables); they reach it through a 0600 file, never an argv. This
// table is where the egress package plugs in.
type egressStarter func(ctx context.Context, m *boxEgress, e jail.Endpoint, ln net.Listener) (*endpointRun, error)

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

// starters are the host services, by what the backend table says serves
// each built-in backend.
var starters = map[backend.Service]egressStarter{
	backend.Model: startModel,
	backend.GRPC:  startGRPC,
	backend.Hosts: startHosts,
}

// serveEgress starts the host service of every endpoint, on the listener
// of the same index in lns when given; on failure it stops what it
// started.
func serveEgress(ctx context.Context, m *boxEgress, eps []jail.Endpoint, lns []net.Listener) ([]*endpointRun, error) {
	var runs []*endpointRun
	for i, e := range eps {
		b, _ := backend.Lookup(e.Backend)
		start := starters[b.Service]
		var err error
		var run *endpointRun
		if start == nil {
			err = fmt.Errorf("--egress %s: no built-in backend %q", e.Name, e.Backend)
		} else {
			var ln net.Listener
			if lns != nil {
				ln = lns[i]
			}
			if run, err = start(ctx, m, e, ln); err != nil {
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
