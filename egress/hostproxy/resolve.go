package hostproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
)

// Resolver looks up a name on the host side. *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Overrides maps normalised names to the one address each resolves to,
// bypassing host resolution (AISAN_RESOLVE).
type Overrides map[string]netip.Addr

// ErrResolve is wrapped by every error [ParseResolve] returns.
var ErrResolve = errors.New("bad AISAN_RESOLVE")

// ParseResolve parses AISAN_RESOLVE: "name=address[,name=address…]".
// Names follow the pattern rules (no wildcard, no port); addresses are IP
// literals without a port. A name listed twice is refused rather than
// guessed at. Empty input gives no overrides.
func ParseResolve(s string) (Overrides, error) {
	o := Overrides{}
	if strings.TrimSpace(s) == "" {
		return o, nil
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		name, addr, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%w: %q is not name=address", ErrResolve, item)
		}
		n, err := NormalizeName(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("%w: name %q: %s", ErrResolve, name, err)
		}
		addr = strings.TrimSpace(addr)
		a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"))
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("%w: %q for %s is not an IP address (no port, no zone)", ErrResolve, addr, n)
		}
		if _, dup := o[n]; dup {
			return nil, fmt.Errorf("%w: %s is listed twice", ErrResolve, n)
		}
		o[n] = a.Unmap()
	}
	return o, nil
}

// String is the canonical AISAN_RESOLVE form, names sorted.
func (o Overrides) String() string {
	names := make([]string, 0, len(o))
	for n := range o {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		names[i] = n + "=" + o[n].String()
	}
	return strings.Join(names, ",")
}

// ErrNotResolved is wrapped when a name is neither overridden nor has a
// fallback resolver.
var ErrNotResolved = errors.New("not in AISAN_RESOLVE")

// Then is a resolver that answers the overridden names and asks base for
// the rest; a nil base refuses them (what tests use, so nothing leaves
// this machine).
func (o Overrides) Then(base Resolver) Resolver { return overrideResolver{o, base} }

type overrideResolver struct {
	o    Overrides
	base Resolver
}

func (r overrideResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := r.o[strings.TrimSuffix(host, ".")]; ok {
		return []netip.Addr{a}, nil
	}
	if r.base == nil {
		return nil, fmt.Errorf("resolving %s: %w", host, ErrNotResolved)
	}
	return r.base.LookupNetIP(ctx, network, host)
}

// HostResolver is the host's own resolver, for production. An absolute
// name (a name the box chose under a wildcard, see lookupName) is looked
// up by Go's own resolver, which reads /etc/hosts and resolv.conf's name
// servers but never the search list; the C library's would skip
// /etc/hosts for it. Other names go to net.DefaultResolver.
var HostResolver Resolver = hostResolver{}

type hostResolver struct{}

var goResolver = &net.Resolver{PreferGo: true}

func (hostResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(host, ".") {
		return goResolver.LookupNetIP(ctx, network, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}
