package strictbox

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/egress/backend"
	"github.com/aisan-dev/aisan/jail"
)

// EgressRequest is one --egress option, parsed.
type EgressRequest struct {
	// Name is the endpoint's name (its AISAN_EGRESS_ variable's stem).
	Name string
	// Backend is the built-in backend ("" for a raw relay).
	Backend string
	// Param is a built-in backend's parameter (provider, file, host list).
	Param string
	// Socket is a raw relay's host socket.
	Socket string
	// Dev and Ino are the socket [CheckRawSocketID] checked; the box is
	// given that socket or none.
	Dev, Ino uint64
}

// rawEgressName is what a raw relay may be called.
var rawEgressName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`) })

// ParseEgress reads NAME=SOCKET (a raw relay) or a built-in backend, as
// the backend table spells them.
func ParseEgress(s string) (EgressRequest, error) {
	head, rest, hasEq := strings.Cut(s, "=")
	base, param, hasColon := strings.Cut(head, ":")
	var named []string
	for _, b := range backend.Builtin {
		if b.Usage() != "" {
			named = append(named, b.Name)
		}
	}
	if b, ok := backend.Lookup(base); ok && b.Usage() != "" {
		r := EgressRequest{Name: head, Backend: base}
		switch {
		case b.Param == backend.NoParam && !hasColon && !hasEq:
		case b.Param == backend.Provider && hasColon && param != "" && !hasEq:
			r.Param = param
		case b.Param == backend.File && !hasColon && hasEq && rest != "":
			r.Param = rest
		case b.Param == backend.NamedFile && hasColon && param != "" && hasEq && rest != "":
			r.Param = rest
		default:
			var usages []string
			for _, b := range backend.Builtin {
				if u := b.Usage(); u != "" {
					usages = append(usages, u)
				}
			}
			last := len(usages) - 1
			return EgressRequest{}, fmt.Errorf("--egress %q: the built-in backends are %s and %s", s, strings.Join(usages[:last], ", "), usages[last])
		}
		return r, nil
	}
	if !hasEq || rest == "" {
		return EgressRequest{}, fmt.Errorf("--egress %q: give NAME=SOCKET for a raw relay, or a built-in backend (%s)", s, strings.Join(named, ", "))
	}
	if !rawEgressName().MatchString(head) {
		return EgressRequest{}, fmt.Errorf("--egress %q: a raw relay's name must match [a-z0-9][a-z0-9-]*", s)
	}
	if !filepath.IsAbs(rest) {
		return EgressRequest{}, fmt.Errorf("--egress %q: the socket must be an absolute path", s)
	}
	return EgressRequest{Name: head, Socket: filepath.Clean(rest)}, nil
}

// TakesFile reports whether the request's parameter is a file name
// (reapi=FILE, grpc:<name>=FILE), which the command layer makes absolute
// as the user meant it: relative to where they are.
func (r EgressRequest) TakesFile() bool {
	b, ok := backend.Lookup(r.Backend)
	return ok && (b.Param == backend.File || b.Param == backend.NamedFile)
}

// endpoint is r as the box gets it: its variable, how its address reads,
// and what serves it, for explain. Ports and sockets are planEgress's.
func (r EgressRequest) endpoint(slotName string) jail.Endpoint {
	e := jail.Endpoint{Name: r.Name, Backend: r.Backend, Param: r.Param, Slot: slotName, Var: backend.EnvName(r.Name)}
	b, builtin := backend.Lookup(r.Backend)
	switch {
	case !builtin:
		e.Why = "raw relay of " + r.Socket
	case b.Service == backend.Hosts:
		e.Why = "HTTP proxy (CONNECT and plain HTTP) to these hosts only, resolved on the host: " + r.Param
	case r.Param != "":
		e.Why = "built-in backend " + r.Backend + " " + r.Param
	default:
		e.Why = "built-in backend " + r.Backend
	}
	e.HTTP = builtin && b.HTTP
	return e
}
