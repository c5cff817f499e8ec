package hostproxy

// Rules for patterns (the policy a user writes, so every case is a decision):
//
//   - A pattern is a host name, "*." and a host name, or an IP address, each
//     optionally followed by ":port". No scheme, path, user or whitespace.
//   - Names are ASCII letters, digits and hyphens in dot-separated labels of
//     1 to 63 bytes, 253 bytes at most. Case and one trailing dot are
//     dropped. Non-ASCII is refused: write the punycode (xn--) form, which
//     is what clients put on the wire.
//   - A name whose last label is all digits is refused: it reads as an IPv4
//     address to some resolvers.
//   - "*.example.com" matches names below example.com (any depth), never
//     example.com itself. The wildcard is one whole leading label; the rest
//     must have two labels at least, so "*.com" is refused.
//   - Without a port a name allows 443 and 80. An IP address must carry its
//     port, and it matches only that address and port.

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// isDefaultPort reports whether a pattern without ":port" allows port:
// HTTPS and HTTP.
func isDefaultPort(port uint16) bool { return port == 443 || port == 80 }

// Pattern is one parsed allow-list entry.
type Pattern struct {
	// Name is the normalised host name (for a wildcard, the part after
	// "*."); empty for an IP pattern.
	Name string
	// Wildcard is set for "*.Name": subdomains of Name, not Name itself.
	Wildcard bool
	// Addr is the address of an IP pattern.
	Addr netip.Addr
	// Port is the one port allowed, or 0 for 443 and 80.
	Port uint16
}

// Explicit reports whether p names one host exactly, with its port: the
// only kind of pattern that may reach loopback, private and the host's
// own addresses.
func (p Pattern) Explicit() bool { return !p.Wildcard && p.Port != 0 }

// String gives the canonical form, which [ParsePattern] reads back as p.
func (p Pattern) String() string {
	var h string
	switch {
	case p.Addr.IsValid():
		return netip.AddrPortFrom(p.Addr, p.Port).String()
	case p.Wildcard:
		h = "*." + p.Name
	default:
		h = p.Name
	}
	if p.Port != 0 {
		h += ":" + strconv.Itoa(int(p.Port))
	}
	return h
}

// ErrPattern is wrapped by every error [ParsePattern] returns.
var ErrPattern = errors.New("bad --allow-host pattern")

// ParsePattern parses one allow-list entry.
func ParsePattern(s string) (Pattern, error) {
	p, err := parsePattern(s)
	if err != nil {
		return Pattern{}, fmt.Errorf("%w %q: %s", ErrPattern, s, err)
	}
	return p, nil
}

func parsePattern(s string) (Pattern, error) {
	if s == "" {
		return Pattern{}, errors.New("empty; give a host name such as example.com")
	}
	if strings.Contains(s, "://") {
		return Pattern{}, errors.New("a URL; give the host name alone (example.com or example.com:8443)")
	}
	if i := strings.IndexAny(s, "/?#@ \t\r\n"); i >= 0 {
		return Pattern{}, fmt.Errorf("%q is not allowed in a host pattern", s[i])
	}
	host, port, err := splitHostPort(s)
	if err != nil {
		return Pattern{}, err
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return Pattern{}, errors.New("an IPv6 zone is not allowed")
		}
		if port == 0 {
			return Pattern{}, fmt.Errorf("an IP address needs its port (%s)", netip.AddrPortFrom(a, 443))
		}
		return Pattern{Addr: a.Unmap(), Port: port}, nil
	}
	p := Pattern{Port: port}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		p.Wildcard = true
		host = rest
	}
	name, err := NormalizeName(host)
	if err != nil {
		return Pattern{}, err
	}
	if p.Wildcard && !strings.Contains(name, ".") {
		return Pattern{}, fmt.Errorf("*.%s would match a whole top-level domain; name a domain with two labels at least", name)
	}
	p.Name = name
	return p, nil
}

// splitHostPort splits "host[:port]" and "[v6]:port"; a bare IPv6 address
// (more than one colon, no brackets) is taken as a host with no port.
func splitHostPort(s string) (string, uint16, error) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return "", 0, errors.New("unclosed [")
		}
		host, rest := s[1:end], s[end+1:]
		if _, err := netip.ParseAddr(host); err != nil {
			return "", 0, fmt.Errorf("[%s] is not an IPv6 address", host)
		}
		if rest == "" {
			return host, 0, nil
		}
		p, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return "", 0, fmt.Errorf("unexpected %q after ]", rest)
		}
		port, err := ParsePort(p)
		return host, port, err
	}
	if strings.Count(s, ":") > 1 {
		return s, 0, nil
	}
	host, p, ok := strings.Cut(s, ":")
	if !ok {
		return s, 0, nil
	}
	port, err := ParsePort(p)
	return host, port, err
}

// ParsePort parses a decimal TCP port, 1 to 65535, digits only.
func ParsePort(s string) (uint16, error) {
	if s == "" || len(s) > 5 || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	n, _ := strconv.Atoi(s)
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return uint16(n), nil
}

// NormalizeName lower-cases a host name, drops one trailing dot and checks
// it is a plain ASCII DNS name (see the rules at the top of this file).
func NormalizeName(s string) (string, error) {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", errors.New("empty host name")
	}
	if len(s) > 253 {
		return "", fmt.Errorf("host name is %d bytes, more than 253", len(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return "", errors.New("non-ASCII host name; write its punycode (xn--) form")
		}
	}
	s = strings.ToLower(s)
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return "", err
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "", fmt.Errorf("%q looks like an IP address; an address must be a whole address:port", s)
	}
	return s, nil
}

func checkLabel(l string) error {
	switch {
	case l == "":
		return errors.New("empty label (two dots in a row, or a leading dot)")
	case strings.Contains(l, "*"):
		return errors.New(`"*" is allowed only as the whole first label ("*.example.com")`)
	case len(l) > 63:
		return fmt.Errorf("label %.20q… is %d bytes, more than 63", l, len(l))
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Errorf("label %q starts or ends with a hyphen", l)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("%q is not allowed in a host name (letters, digits, hyphens and dots only)", c)
		}
	}
	return nil
}

// List is a parsed allow-list. The zero value allows nothing.
type List []Pattern

// ParseList parses the patterns from --allow-host flags and allow_hosts in
// bind specs, in order, refusing the first bad one. Duplicates (after
// normalisation) are dropped, so explain prints each once.
func ParseList(specs []string) (List, error) {
	var l List
	seen := map[Pattern]bool{}
	for _, s := range specs {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			l = append(l, p)
		}
	}
	return l, nil
}

// Strings gives the canonical patterns, for explain.
func (l List) Strings() []string {
	out := make([]string, len(l))
	for i, p := range l {
		out[i] = p.String()
	}
	return out
}

// Match reports whether target t is on the list, and whether one of the
// matching patterns is [Pattern.Explicit].
func (l List) Match(t Target) (ok, explicit bool) {
	for _, p := range l {
		if p.matches(t) {
			ok = true
			if p.Explicit() {
				explicit = true
			}
		}
	}
	return ok, explicit
}

func (p Pattern) matches(t Target) bool {
	if p.Port == 0 {
		if !isDefaultPort(t.Port) {
			return false
		}
	} else if t.Port != p.Port {
		return false
	}
	if p.Addr.IsValid() || t.Addr.IsValid() {
		return p.Addr.IsValid() && t.Addr.IsValid() && p.Addr == t.Addr
	}
	if p.Wildcard {
		return strings.HasSuffix(t.Name, "."+p.Name)
	}
	return t.Name == p.Name
}

// ErrWithNet is returned by [CheckNet].
var ErrWithNet = errors.New("--allow-host with --net")

// CheckNet refuses an allow-list together with --net: with the host
// network the box reaches every host directly, so the list would restrict
// nothing while reading as if it did. source says where the patterns came
// from (for example "--allow-host" or a bind spec's path).
func CheckNet(net bool, patterns []string, source string) error {
	if !net || len(patterns) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s lists %q, but --net already gives the box the whole host network; drop --net to limit the box to the listed hosts, or drop the list", ErrWithNet, source, patterns[0])
}
