package hostproxy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// The addresses in these tables are values handed to the pure parsing and
// classification functions (Parse*, Classify, Check, Decide), which open
// no socket: nothing here is ever dialled, resolved or sent to. Where a
// class needs an example from a range (private, this-network, shared),
// the example is one of its addresses; every public example comes from
// the documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
// 2001:db8::/32), which no host answers. The tests that run the proxy
// dial only through the loopback-only guard in helpers_test.go, which
// fails the test on any other address.

// patternCases seed FuzzParsePattern too.
var patternCases = []struct {
	in, want, err string // want is the canonical form; err a substring
}{
	{in: "github.com", want: "github.com"},
	{in: "GitHub.COM.", want: "github.com"},
	{in: "*.githubusercontent.com", want: "*.githubusercontent.com"},
	{in: "*.Example.com:8443", want: "*.example.com:8443"},
	{in: "devbox.internal:8080", want: "devbox.internal:8080"},
	{in: "xn--bcher-kva.example", want: "xn--bcher-kva.example"},
	{in: "a-b.c1", want: "a-b.c1"},
	{in: "localhost:3000", want: "localhost:3000"},
	{in: "192.0.2.7:443", want: "192.0.2.7:443"},
	{in: "[2001:db8::1]:443", want: "[2001:db8::1]:443"},
	{in: "[::ffff:192.0.2.7]:443", want: "192.0.2.7:443"},
	{in: "", err: "empty"},
	{in: "https://github.com", err: "a URL"},
	{in: "github.com/foo", err: `'/' is not allowed`},
	{in: "user@github.com", err: `'@' is not allowed`},
	{in: " github.com", err: `' ' is not allowed`},
	{in: "github.com:", err: `port "" is not`},
	{in: "github.com:0", err: `port "0"`},
	{in: "github.com:65536", err: `port "65536"`},
	{in: "github.com:+80", err: `port "+80"`},
	{in: "github.com:443:1", err: "not allowed in a host name"},
	{in: "192.0.2.7", err: "needs its port (192.0.2.7:443)"},
	{in: "2001:db8::1", err: "needs its port ([2001:db8::1]:443)"},
	{in: "[2001:db8::1]", err: "needs its port"},
	{in: "[fe80::1%eth0]:443", err: "zone"},
	{in: "[github.com]:443", err: "not an IPv6 address"},
	{in: "[::1", err: "unclosed"},
	{in: "[::1]443", err: "after ]"},
	{in: "*", err: `"*" is allowed only`},
	{in: "*.com", err: "whole top-level domain"},
	{in: "*.", err: "empty host name"},
	{in: "**.example.com", err: `"*" is allowed only`},
	{in: "foo.*.example.com", err: `"*" is allowed only`},
	{in: "*foo.example.com", err: `"*" is allowed only`},
	{in: "*.*.example.com", err: `"*" is allowed only`},
	{in: "bücher.example", err: "punycode"},
	{in: "a..b", err: "empty label"},
	{in: ".a.b", err: "empty label"},
	{in: "-a.b", err: "hyphen"},
	{in: "a-.b", err: "hyphen"},
	{in: "a_b.example", err: `'_' is not allowed`},
	{in: "127.1", err: "looks like an IP address"},
	{in: "1.2.3.4.5", err: "looks like an IP address"},
	{in: "0x7f.1", err: "looks like an IP address"},
	{in: strings.Repeat("a", 64) + ".com", err: "more than 63"},
	{in: strings.Repeat("abcdefgh.", 29) + "com", err: "more than 253"},
}

func TestParsePattern(t *testing.T) {
	for _, c := range patternCases {
		p, err := ParsePattern(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrPattern) {
				t.Errorf("ParsePattern(%q) = %v, %v; want an ErrPattern error containing %q", c.in, p, err, c.err)
			}
			continue
		}
		if err != nil || p.String() != c.want {
			t.Errorf("ParsePattern(%q) = %q, %v; want %q", c.in, p, err, c.want)
			continue
		}
		if q, err := ParsePattern(p.String()); err != nil || q != p {
			t.Errorf("canonical %q does not read back: %v, %v", p, q, err)
		}
	}
}

func TestParseListDropsDuplicates(t *testing.T) {
	l, err := ParseList([]string{"GitHub.com", "github.com.", "*.x.example", "github.com:443"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.Strings(), " "); got != "github.com *.x.example github.com:443" {
		t.Fatalf("list %q", got)
	}
	if _, err := ParseList([]string{"ok.example", "bad..example"}); err == nil || !strings.Contains(err.Error(), `"bad..example"`) {
		t.Fatalf("bad entry: %v", err)
	}
}

func mustList(t testing.TB, ps ...string) List {
	t.Helper()
	l, err := ParseList(ps)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustTarget(t testing.TB, s string) Target {
	t.Helper()
	tg, err := ParseTarget(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestMatch(t *testing.T) {
	l := mustList(t, "github.com", "*.githubusercontent.com", "devbox.internal:8080", "192.0.2.7:443", "[2001:db8::5]:8443", "*.corp.example:9000")
	cases := []struct {
		target       string
		ok, explicit bool
	}{
		{"github.com:443", true, false},
		{"GITHUB.com.:80", true, false},
		{"github.com:22", false, false},
		{"api.github.com:443", false, false},
		{"raw.githubusercontent.com:443", true, false},
		{"a.b.githubusercontent.com:443", true, false},
		{"githubusercontent.com:443", false, false},
		{"evilgithubusercontent.com:443", false, false},
		{"githubusercontent.com.evil.example:443", false, false},
		{"devbox.internal:8080", true, true},
		{"devbox.internal:443", false, false},
		{"192.0.2.7:443", true, true},
		{"192.0.2.7:80", false, false},
		{"[::ffff:192.0.2.7]:443", true, true},
		{"[2001:db8::5]:8443", true, true},
		{"[2001:db8::5]:443", false, false},
		{"x.corp.example:9000", true, false},
		{"x.corp.example:443", false, false},
	}
	for _, c := range cases {
		ok, explicit := l.Match(mustTarget(t, c.target))
		if ok != c.ok || explicit != c.explicit {
			t.Errorf("Match(%s) = %v, %v; want %v, %v", c.target, ok, explicit, c.ok, c.explicit)
		}
	}
	// A name never matches an address pattern that happens to share text.
	if ok, _ := mustList(t, "192.0.2.7:443").Match(Target{Name: "192.0.2.7.example", Port: 443}); ok {
		t.Error("a name matched an address pattern")
	}
	if ok, _ := (List{}).Match(mustTarget(t, "github.com:443")); ok {
		t.Error("the empty list allowed something")
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM.:443":     "example.com:443",
		"[::ffff:127.0.0.1]:1": "127.0.0.1:1",
		"[2001:db8::1]:443":    "[2001:db8::1]:443",
	} {
		if got, err := ParseTarget(in, 0); err != nil || got.String() != want {
			t.Errorf("ParseTarget(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	if got, err := ParseTarget("example.com", 80); err != nil || got.String() != "example.com:80" {
		t.Errorf("default port: %v, %v", got, err)
	}
	for _, bad := range []string{"", "example.com", "2001:db8::1:443", "*.example.com:443", "a%2eb:443", "[fe80::1%25eth0]:443", "ex ample:443", "127.1:443", "host:99999"} {
		if got, err := ParseTarget(bad, 0); err == nil {
			t.Errorf("ParseTarget(%q) = %v, want an error", bad, got)
		}
	}
}

var classCases = []struct {
	addr string
	want Class
}{
	{"198.51.100.8", Public},
	{"2001:db8:2::1111", Public},
	{"127.0.0.1", Loopback},
	{"127.255.0.9", Loopback},
	{"::1", Loopback},
	{"::ffff:127.0.0.1", Loopback},
	{"::127.0.0.1", Loopback},
	{"64:ff9b::127.0.0.1", Loopback},
	{"0.0.0.0", Unspecified},
	{"0.1.2.3", Unspecified},
	{"::", Unspecified},
	{"::ffff:0.0.0.0", Unspecified},
	{"169.254.169.254", LinkLocal},
	{"fe80::1", LinkLocal},
	{"::ffff:169.254.169.254", LinkLocal},
	{"10.1.2.3", Private},
	{"172.16.0.1", Private},
	{"172.31.255.255", Private},
	{"172.32.0.1", Public},
	{"192.168.1.1", Private},
	{"fd00::2", Private},
	{"fc00::1", Private},
	{"fec0::1", Private},
	{"::ffff:10.0.0.1", Private},
	{"64:ff9b::10.0.0.1", Private},
	{"100.64.0.1", Shared},
	{"100.127.255.255", Shared},
	{"100.128.0.1", Public},
	{"::ffff:100.64.0.1", Shared},
	{"224.0.0.1", Multicast},
	{"ff02::1", Multicast},
	{"::ffff:239.1.1.1", Multicast},
	{"255.255.255.255", Broadcast},
	{"::ffff:255.255.255.255", Broadcast},
	{"240.0.0.1", Reserved},
	{"203.0.113.9", HostOwn},
	{"::ffff:203.0.113.9", HostOwn},
	{"2001:db8:1::9", HostOwn},
}

func TestClassify(t *testing.T) {
	local := []netip.Addr{netip.MustParseAddr("203.0.113.9"), netip.MustParseAddr("2001:db8:1::9")}
	for _, c := range classCases {
		if got := Classify(netip.MustParseAddr(c.addr), local); got != c.want {
			t.Errorf("Classify(%s) = %q, want %q", c.addr, got, c.want)
		}
	}
	if got := Classify(netip.Addr{}, nil); got != Reserved {
		t.Errorf("zero address: %q", got)
	}
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestCheck(t *testing.T) {
	name := Target{Name: "devbox.internal", Port: 8080}
	local := addrs("203.0.113.9")
	cases := []struct {
		why      string
		t        Target
		addrs    []netip.Addr
		explicit bool
		want     string // allowed addresses, or the error's substring after "!"
	}{
		{"public", name, addrs("198.51.100.8"), false, "198.51.100.8"},
		{"loopback via a bare name or wildcard", name, addrs("127.0.0.1"), false, "!resolves only to loopback addresses, allowed only when named exactly with the port; to allow it, start the box with --allow-host devbox.internal:8080"},
		{"loopback named exactly", name, addrs("127.0.0.1"), true, "127.0.0.1"},
		{"mapped loopback named exactly is dialled in IPv4 form", name, addrs("::ffff:127.0.0.1"), true, "127.0.0.1"},
		{"host's own address", name, addrs("203.0.113.9"), false, "!this host's own"},
		{"mixed: the inside address is dropped", name, addrs("10.0.0.1", "198.51.100.4"), false, "198.51.100.4"},
		{"multicast even when explicit", name, addrs("224.0.0.1"), true, "!which no pattern can allow"},
		{"no address", name, nil, false, "!resolves to no address"},
		{"address literal", Target{Addr: netip.MustParseAddr("255.255.255.255"), Port: 443}, addrs("255.255.255.255"), true, "!is a broadcast address"},
		{"two classes named once each", name, addrs("10.0.0.1", "10.0.0.2", "127.0.0.1"), false, "!private, loopback addresses"},
	}
	for _, c := range cases {
		got, err := Check(c.t, c.addrs, c.explicit, local)
		if want, isErr := strings.CutPrefix(c.want, "!"); isErr {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: Check = %v, %v; want error with %q", c.why, got, err, want)
			}
			continue
		}
		var ss []string
		for _, a := range got {
			ss = append(ss, a.String())
		}
		if err != nil || strings.Join(ss, " ") != c.want {
			t.Errorf("%s: Check = %v, %v; want %s", c.why, got, err, c.want)
		}
	}
}

func TestDecideHints(t *testing.T) {
	l := mustList(t, "github.com")
	for target, hint := range map[string]string{
		"gitlab.com:443":  "--allow-host gitlab.com (or allow_hosts = [\"gitlab.com\"] in a bind spec)",
		"github.com:22":   "--allow-host github.com:22 ",
		"192.0.2.1:443":   "--allow-host 192.0.2.1:443 ",
		"[2001:db8::1]:1": "--allow-host [2001:db8::1]:1 ",
	} {
		_, err := Decide(l, mustTarget(t, target))
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), hint) || !strings.HasPrefix(err.Error(), target+" is not on this box's host allow-list;") {
			t.Errorf("Decide(%s) = %v; want a RefusedError with %q", target, err, hint)
		}
	}
}

var resolveCases = []struct {
	in, want, err string
}{
	{in: "", want: ""},
	{in: "reg.test=127.0.0.1", want: "reg.test=127.0.0.1"},
	{in: " Reg.Test. = 127.0.0.1 , git.test=::1", want: "git.test=::1,reg.test=127.0.0.1"},
	{in: "a.test=[::ffff:10.0.0.1]", want: "a.test=10.0.0.1"},
	{in: "a.test", err: "not name=address"},
	{in: "a.test=", err: "is not an IP address"},
	{in: "a.test=127.0.0.1:80", err: "is not an IP address"},
	{in: "a.test=fe80::1%eth0", err: "is not an IP address"},
	{in: "a.test=host.example", err: "is not an IP address"},
	{in: "*.a.test=127.0.0.1", err: "name"},
	{in: "a.test=127.0.0.1,A.test=127.0.0.2", err: "listed twice"},
	{in: "a.test=127.0.0.1,", err: "not name=address"},
	{in: "=127.0.0.1", err: "empty host name"},
}

func TestParseResolve(t *testing.T) {
	for _, c := range resolveCases {
		o, err := ParseResolve(c.in)
		if c.err != "" {
			if err == nil || !errors.Is(err, ErrResolve) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseResolve(%q) = %v, %v; want error with %q", c.in, o, err, c.err)
			}
			continue
		}
		if err != nil || o.String() != c.want {
			t.Errorf("ParseResolve(%q) = %q, %v; want %q", c.in, o, err, c.want)
		}
	}
}

func TestOverridesResolver(t *testing.T) {
	o, _ := ParseResolve("reg.test=127.0.0.1")
	r := o.Then(nil)
	got, err := r.LookupNetIP(t.Context(), "ip", "reg.test")
	if err != nil || len(got) != 1 || got[0] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("override: %v, %v", got, err)
	}
	if _, err := r.LookupNetIP(t.Context(), "ip", "other.test"); !errors.Is(err, ErrNotResolved) {
		t.Fatalf("unlisted name with no fallback: %v", err)
	}
}

func TestBoxEnv(t *testing.T) {
	env, err := BoxEnv("http://127.0.0.1:8717")
	if err != nil {
		t.Fatal(err)
	}
	want := "ALL_PROXY=http://127.0.0.1:8717 HTTPS_PROXY=http://127.0.0.1:8717 HTTP_PROXY=http://127.0.0.1:8717 NO_PROXY=localhost,127.0.0.1,::1 " +
		"all_proxy=http://127.0.0.1:8717 http_proxy=http://127.0.0.1:8717 https_proxy=http://127.0.0.1:8717 no_proxy=localhost,127.0.0.1,::1"
	if got := strings.Join(env, " "); got != want {
		t.Fatalf("BoxEnv:\n got %s\nwant %s", got, want)
	}
	for _, bad := range []string{"127.0.0.1:8717", "https://127.0.0.1:8717", "http://192.0.2.1:8717", "http://localhost:8717", "http://127.0.0.1", "http://u:p@127.0.0.1:1", "http://127.0.0.1:1/x", "http://127.0.0.1:0"} {
		if env, err := BoxEnv(bad); err == nil {
			t.Errorf("BoxEnv(%q) = %v, want an error", bad, env)
		}
	}
}

func TestCheckNet(t *testing.T) {
	if err := CheckNet(false, []string{"github.com"}, "--allow-host"); err != nil {
		t.Fatal(err)
	}
	if err := CheckNet(true, nil, "--allow-host"); err != nil {
		t.Fatal(err)
	}
	err := CheckNet(true, []string{"github.com"}, "binds.toml")
	want := `--allow-host with --net: binds.toml lists "github.com", but --net already gives the box the whole host network; drop --net to limit the box to the listed hosts, or drop the list`
	if !errors.Is(err, ErrWithNet) || err.Error() != want {
		t.Fatalf("CheckNet:\n got %v\nwant %s", err, want)
	}
}
