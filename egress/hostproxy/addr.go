package hostproxy

// Rules for addresses (what a checked name may connect to):
//
//   - Every address is judged in its IPv4 form when it embeds one: the
//     IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64
//     (64:ff9b::/96) forms reach the same IPv4 host, so they get its verdict.
//   - Loopback, unspecified (0.0.0.0/8, ::), link-local, private (RFC 1918,
//     fc00::/7, fec0::/10), shared (100.64.0.0/10) and the host's own
//     interface addresses are "inside" addresses: allowed only through a
//     pattern that names the host exactly with its port. A name pointed at
//     127.0.0.1 must never reach a host service by accident.
//   - Multicast, broadcast and the reserved 240.0.0.0/4 are never allowed:
//     no TCP service lives there.

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Target is what a box asked to reach: a normalised name or an address,
// and a port.
type Target struct {
	Name string     // set for a host name
	Addr netip.Addr // set for an IP literal
	Port uint16
}

// Host is the name or address as it appears in messages and patterns.
func (t Target) Host() string {
	if t.Addr.IsValid() {
		return t.Addr.String()
	}
	return t.Name
}

// String is host:port.
func (t Target) String() string {
	if t.Addr.IsValid() {
		return netip.AddrPortFrom(t.Addr, t.Port).String()
	}
	return fmt.Sprintf("%s:%d", t.Name, t.Port)
}

// ParseTarget parses a request authority ("host:port", "[v6]:port", or
// without the port when defaultPort is not 0) under the same rules as
// patterns, minus the wildcard.
func ParseTarget(authority string, defaultPort uint16) (Target, error) {
	t, err := parseTarget(authority, defaultPort)
	if err != nil {
		return Target{}, fmt.Errorf("bad target %q: %s", authority, err)
	}
	return t, nil
}

func parseTarget(s string, defaultPort uint16) (Target, error) {
	if s == "" {
		return Target{}, errors.New("empty")
	}
	if i := strings.IndexAny(s, "/?#@*% \t\r\n"); i >= 0 {
		return Target{}, fmt.Errorf("%q is not allowed in a host", s[i])
	}
	if !strings.HasPrefix(s, "[") && strings.Count(s, ":") > 1 {
		return Target{}, errors.New("an IPv6 address must be in brackets")
	}
	host, port, err := splitHostPort(s)
	if err != nil {
		return Target{}, err
	}
	if port == 0 {
		if defaultPort == 0 {
			return Target{}, errors.New("no port")
		}
		port = defaultPort
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return Target{}, errors.New("an IPv6 zone is not allowed")
		}
		return Target{Addr: a.Unmap(), Port: port}, nil
	}
	name, err := NormalizeName(host)
	if err != nil {
		return Target{}, err
	}
	return Target{Name: name, Port: port}, nil
}

// Class says why an address is special; the empty Class is an ordinary
// internet address.
type Class string

const (
	Public      Class = ""
	Loopback    Class = "loopback"
	Unspecified Class = "unspecified"
	LinkLocal   Class = "link-local"
	Private     Class = "private"
	Shared      Class = "shared (100.64.0.0/10)"
	HostOwn     Class = "this host's own"
	Multicast   Class = "multicast"
	Broadcast   Class = "broadcast"
	Reserved    Class = "reserved"
)

// Never reports whether no pattern can allow the class.
func (c Class) Never() bool { return c == Multicast || c == Broadcast || c == Reserved }

var (
	shared    = netip.MustParsePrefix("100.64.0.0/10")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	reserved  = netip.MustParsePrefix("240.0.0.0/4")
	siteLocal = netip.MustParsePrefix("fec0::/10")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	compat    = netip.MustParsePrefix("::/96")
	bcast     = netip.MustParseAddr("255.255.255.255")
)

// embeddedV4 gives the IPv4 address an IPv6 address reaches, if any.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	if a.Is4In6() {
		return a.Unmap(), true
	}
	if !a.Is6() || a.IsUnspecified() || a.IsLoopback() {
		return a, false
	}
	if nat64.Contains(a) || compat.Contains(a) {
		b := a.As16()
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	}
	return a, false
}

// Classify judges a, with local the host's own interface addresses (a host
// fact gathered once, see [LocalAddrs]).
func Classify(a netip.Addr, local []netip.Addr) Class {
	a = a.WithZone("")
	if v4, ok := embeddedV4(a); ok {
		a = v4
	}
	switch {
	case !a.IsValid():
		return Reserved
	case a == bcast:
		return Broadcast
	case a.IsMulticast():
		return Multicast
	case a.Is4() && reserved.Contains(a):
		return Reserved
	case a.IsUnspecified() || a.Is4() && thisNet.Contains(a):
		return Unspecified
	case a.IsLoopback():
		return Loopback
	case a.IsLinkLocalUnicast():
		return LinkLocal
	case a.IsPrivate() || siteLocal.Contains(a):
		return Private
	case shared.Contains(a):
		return Shared
	}
	for _, l := range local {
		if l.WithZone("").Unmap() == a {
			return HostOwn
		}
	}
	return Public
}

// LocalAddrs gathers this host's interface addresses, the host fact that
// [Classify] takes. Call it once per launch.
func LocalAddrs() ([]netip.Addr, error) {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("listing this host's addresses: %w", err)
	}
	var out []netip.Addr
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out, nil
}

// Check decides which of addrs (what t's name resolved to, or t's own
// address) may be dialled, in order. explicit says whether a matching
// pattern named t exactly with its port. When none may, the error says
// why, naming the classes but not the addresses.
func Check(t Target, addrs []netip.Addr, explicit bool, local []netip.Addr) ([]netip.Addr, error) {
	var ok []netip.Addr
	var refused []string
	for _, a := range addrs {
		c := Classify(a, local)
		switch {
		case c == Public, !c.Never() && explicit:
			ok = append(ok, a.Unmap())
		default:
			if !contains(refused, string(c)) {
				refused = append(refused, string(c))
			}
		}
	}
	if len(ok) > 0 {
		return ok, nil
	}
	if len(refused) == 0 {
		return nil, fmt.Errorf("%s resolves to no address", t.Host())
	}
	what := strings.Join(refused, ", ")
	if t.Addr.IsValid() {
		return nil, fmt.Errorf("%s is a %s address, which no pattern can allow", t, what)
	}
	for _, r := range refused {
		if Class(r).Never() {
			return nil, fmt.Errorf("%s resolves only to %s addresses, which no pattern can allow", t.Name, what)
		}
	}
	return nil, &RefusedError{Target: t, Reason: fmt.Sprintf("%s resolves only to %s addresses, allowed only when named exactly with the port", t.Name, what), Hint: t.String()}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
