package main

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
// endpoint's socket. Names are resolved here, on the host, through
// AISAN_RESOLVE's overrides first; the box has no DNS of its own.
func startHosts(ctx context.Context, e jail.Endpoint) (func(), []string, error) {
	list, err := hostproxy.ParseList(strings.Fields(e.Param))
	if err != nil {
		return nil, nil, err
	}
	var resolver hostproxy.Resolver = hostproxy.HostResolver
	if v := os.Getenv("AISAN_RESOLVE"); v != "" {
		o, err := hostproxy.ParseResolve(v)
		if err != nil {
			return nil, nil, fmt.Errorf("AISAN_RESOLVE: %w", err)
		}
		resolver = o.Then(hostproxy.HostResolver)
	}
	local, err := hostproxy.LocalAddrs()
	if err != nil {
		return nil, nil, fmt.Errorf("listing this host's addresses: %w", err)
	}
	log, err := openEgressAudit(e.Slot)
	if err != nil {
		return nil, nil, err
	}
	ln, err := listenEndpoint(e)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	p := hostproxy.New(hostproxy.Config{Allow: list, Resolver: resolver, Local: local, Audit: log})
	go p.Serve(ln)
	env, err := hostproxy.BoxEnv("http://127.0.0.1:" + strconv.Itoa(e.Port))
	if err != nil {
		p.Close()
		log.Close()
		return nil, nil, err
	}
	return func() { p.Close(); log.Close() }, env, nil
}

// startGRPC serves a REAPI (reapi=FILE) or any gRPC allow-list
// (grpc:NAME=FILE) endpoint: prior-knowledge h2c from the box, checked per
// stream, to the configured TLS upstream with the host's credential.
func startGRPC(generic bool) egressStarter {
	return func(ctx context.Context, e jail.Endpoint) (func(), []string, error) {
		name := "reapi"
		if generic {
			name = strings.TrimPrefix(e.Name, "grpc:")
		}
		if e.Socket == "" {
			return nil, nil, fmt.Errorf("--egress %s with --net is not supported yet; drop --net (the box reaches it through its own loopback)", e.Name)
		}
		cfg, err := reapi.Load(name, generic, e.Param)
		if err != nil {
			return nil, nil, err
		}
		src, err := cfg.Source()
		if err != nil {
			return nil, nil, err
		}
		log, err := openEgressAudit(e.Slot)
		if err != nil {
			return nil, nil, err
		}
		srv, err := reapi.New(cfg, reapi.Options{Authority: "127.0.0.1:" + strconv.Itoa(e.Port), Audit: log, Source: src})
		if err != nil {
			log.Close()
			return nil, nil, err
		}
		ln, err := listenEndpoint(e)
		if err != nil {
			srv.Close()
			log.Close()
			return nil, nil, err
		}
		go srv.Serve(ln)
		return func() { srv.Close(); log.Close() }, nil, nil
	}
}
