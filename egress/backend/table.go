package backend

import (
	"fmt"
	"strings"

	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/egress/openai"
	"github.com/aisan-dev/aisan/egress/policy"
	"github.com/aisan-dev/aisan/jail/agent"
)

// The built-in backends' names are written here once. Everything that
// knows a backend by name reads this table: New, the strict box's
// --egress parsing and its host services, and the address a box is
// given to reach each one.

// Service is what serves a built-in backend on the host.
type Service int

const (
	// Model is a model API, built by [New] and served by package egress.
	Model Service = iota + 1
	// GRPC is a gRPC allow-list (REAPI or any), served by egress/reapi.
	GRPC
	// Hosts is the host allow-list proxy (--allow-host), egress/hostproxy.
	Hosts
)

// Param is the parameter a backend takes after its name in --egress.
type Param int

const (
	// NoParam: the name alone ("anthropic").
	NoParam Param = iota
	// Provider: NAME:<provider> ("openai-compatible:groq").
	Provider
	// File: NAME=FILE ("reapi=/path/reapi.toml").
	File
	// NamedFile: NAME:<name>=FILE ("grpc:builds=/path/builds.toml").
	NamedFile
	// List: set by aisan from --allow-host, never named with --egress.
	List
)

// Info is one built-in backend.
type Info struct {
	// Name is the backend's name, the stem of --egress.
	Name string
	// Param is what follows the name.
	Param Param
	// Service is what serves it on the host.
	Service Service
	// HTTP is set when clients reach it over HTTP: the box's address for
	// it is then a URL (http://127.0.0.1:PORT).
	HTTP bool
	// Serves is the agent kind whose client it serves when the user names
	// no backend for it; an agent with several tries them in table order
	// and takes the first the host has a credential for.
	Serves string
	// AddressInArgs is set when the client is routed by options that name
	// the endpoint's address (Codex's -c base_url), not by variables.
	AddressInArgs bool
	// APIKey is set when --api-key selects its credential (an API key
	// instead of the subscription login).
	APIKey bool
	// OnRequest is set when it serves its agent only when the user chose
	// it over the agent's default (claude --strict --vertex).
	OnRequest bool
	// Policy is the request bodies it lets pass, as `aisan explain
	// --policy` prints them; nil for a backend without one.
	Policy func() *policy.Table
	// new builds a model backend with its parameter.
	new func(param string, o Options) (*Spec, error)
}

// Builtin are the built-in backends, in the order an agent is offered
// them.
var Builtin = []Info{
	{Name: "anthropic", Service: Model, HTTP: true, Serves: agent.Claude.Kind, APIKey: true, Policy: anthropic.Policy,
		new: func(_ string, o Options) (*Spec, error) { return newAnthropic(o) }},
	{Name: "vertex", Service: Model, HTTP: true, Serves: agent.Claude.Kind, OnRequest: true, Policy: anthropic.VertexPolicy,
		new: func(_ string, o Options) (*Spec, error) { return newVertex(o) }},
	{Name: "codex", Service: Model, HTTP: true, Serves: agent.Codex.Kind, AddressInArgs: true, Policy: openai.ResponsesPolicy,
		new: func(_ string, o Options) (*Spec, error) { return newCodex(o) }},
	{Name: "openai", Service: Model, HTTP: true, Serves: agent.Codex.Kind, AddressInArgs: true, Policy: openai.ResponsesPolicy,
		new: func(_ string, o Options) (*Spec, error) { return newOpenAI(o) }},
	{Name: "openai-compatible", Param: Provider, Service: Model, HTTP: true, Serves: agent.Opencode.Kind, Policy: openai.ChatPolicy,
		new: newCompatible},
	{Name: "reapi", Param: File, Service: GRPC},
	{Name: "grpc", Param: NamedFile, Service: GRPC},
	{Name: hostproxy.Backend, Param: List, Service: Hosts, HTTP: true},
}

// Lookup is the built-in backend called name (without its parameter).
func Lookup(name string) (Info, bool) {
	for _, b := range Builtin {
		if b.Name == name {
			return b, true
		}
	}
	return Info{}, false
}

// Usage is how --egress names the backend: "anthropic",
// "openai-compatible:<provider>", "reapi=FILE", "grpc:<name>=FILE"; ""
// for one aisan sets itself.
func (b Info) Usage() string {
	switch b.Param {
	case NoParam:
		return b.Name
	case Provider:
		return b.Name + ":<provider>"
	case File:
		return b.Name + "=FILE"
	case NamedFile:
		return b.Name + ":<name>=FILE"
	}
	return ""
}

// FullName is the name a model backend is built by ([New]): the name,
// with an opencode provider after a ":".
func (b Info) FullName(param string) string {
	if b.Param == Provider && param != "" {
		return b.Name + ":" + param
	}
	return b.Name
}

// New builds the model backend called name ("anthropic",
// "openai-compatible:<provider>", …).
func New(name string, o Options) (*Spec, error) {
	base, param, _ := strings.Cut(name, ":")
	b, ok := Lookup(base)
	if !ok || b.new == nil || (b.Param == Provider) != (param != "") {
		var known []string
		for _, b := range Builtin {
			if b.Service == Model {
				known = append(known, b.Usage())
			}
		}
		return nil, fmt.Errorf("unknown egress backend %q (known: %s)", name, strings.Join(known, ", "))
	}
	o, err := o.defaults()
	if err != nil {
		return nil, fmt.Errorf("egress %s: %w", name, err)
	}
	if o.APIKey && !b.APIKey {
		return nil, fmt.Errorf("egress %s: --api-key applies to the anthropic backend only", name)
	}
	if b.Param == Provider && !providerRE().MatchString(param) {
		return nil, fmt.Errorf("egress %s: %q is not an opencode provider id", name, param)
	}
	s, err := b.new(param, o)
	if err != nil {
		return nil, fmt.Errorf("egress %s: %w", name, err)
	}
	s.EnvName = EnvName(name)
	inner := s.BoxEnv
	s.BoxEnv = func(baseURL, token string) []string {
		return append([]string{s.EnvName + "=" + baseURL}, inner(baseURL, token)...)
	}
	return s, nil
}
