package hostproxy

import (
	"net/netip"
	"strings"
	"testing"
)

func FuzzParsePattern(f *testing.F) {
	for _, c := range patternCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePattern(s)
		if err != nil {
			return
		}
		c := p.String()
		q, err := ParsePattern(c)
		if err != nil || q != p {
			t.Fatalf("%q: canonical %q reads back as %v, %v", s, c, q, err)
		}
		if c != strings.ToLower(c) || strings.ContainsAny(c, " /@") {
			t.Fatalf("%q: canonical %q is not normalised", s, c)
		}
		if p.Addr.IsValid() && (p.Port == 0 || p.Wildcard || p.Name != "") {
			t.Fatalf("%q: address pattern %+v without its port or with a name", s, p)
		}
		if p.Wildcard {
			if ok, _ := (List{p}).Match(Target{Name: p.Name, Port: 443}); ok {
				t.Fatalf("%q: wildcard matches its own base name", s)
			}
			if !strings.Contains(p.Name, ".") {
				t.Fatalf("%q: wildcard over a top-level domain", s)
			}
		}
	})
}

func FuzzMatch(f *testing.F) {
	f.Add("*.example.com", "a.example.com:443")
	f.Add("*.example.com", "example.com:443")
	f.Add("example.com:8080", "EXAMPLE.com.:8080")
	f.Add("192.0.2.1:443", "[::ffff:192.0.2.1]:443")
	f.Add("github.com", "github.com:22")
	f.Fuzz(func(t *testing.T, pat, target string) {
		p, err := ParsePattern(pat)
		if err != nil {
			return
		}
		tg, err := ParseTarget(target, 0)
		if err != nil {
			return
		}
		ok, explicit := List{p}.Match(tg)
		if !ok {
			if explicit {
				t.Fatal("explicit without a match")
			}
			return
		}
		if explicit != p.Explicit() {
			t.Fatalf("%q vs %q: explicit %v", pat, target, explicit)
		}
		if p.Port != 0 && tg.Port != p.Port || p.Port == 0 && tg.Port != 443 && tg.Port != 80 {
			t.Fatalf("%q matched %q on port %d", pat, target, tg.Port)
		}
		switch {
		case p.Addr.IsValid():
			if tg.Addr != p.Addr {
				t.Fatalf("%q matched %q", pat, target)
			}
		case tg.Addr.IsValid():
			t.Fatalf("name pattern %q matched address %q", pat, target)
		case p.Wildcard:
			if tg.Name == p.Name || !strings.HasSuffix(tg.Name, "."+p.Name) {
				t.Fatalf("%q matched %q", pat, target)
			}
		default:
			if tg.Name != p.Name {
				t.Fatalf("%q matched %q", pat, target)
			}
		}
		// Whatever matched, an inside address needs an explicit pattern.
		// Check only classifies these addresses; it dials nothing.
		for _, a := range []string{"127.0.0.1", "::ffff:10.0.0.1", "169.254.169.254", "0.0.0.0"} {
			got, err := Check(tg, []netip.Addr{netip.MustParseAddr(a)}, explicit, nil)
			if (err == nil) != explicit || len(got) > 1 {
				t.Fatalf("%q/%q: %s allowed=%v with explicit=%v", pat, target, a, err == nil, explicit)
			}
		}
	})
}

func FuzzParseResolve(f *testing.F) {
	for _, c := range resolveCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseResolve(s)
		if err != nil {
			return
		}
		back, err := ParseResolve(o.String())
		if err != nil || back.String() != o.String() {
			t.Fatalf("%q: canonical %q reads back as %q, %v", s, o, back, err)
		}
		for n, a := range o {
			if _, err := NormalizeName(n); err != nil || a.Is4In6() || a.Zone() != "" {
				t.Fatalf("%q: entry %s=%s", s, n, a)
			}
		}
	})
}

func FuzzClassify(f *testing.F) {
	for _, c := range classCases {
		f.Add(netip.MustParseAddr(c.addr).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		c := Classify(a, nil)
		if a.Is4() {
			if m := Classify(netip.AddrFrom16(a.As16()), nil); m != c {
				t.Fatalf("%s is %q but its mapped form is %q", a, c, m)
			}
		}
		_, err := Check(Target{Name: "x.example", Port: 443}, []netip.Addr{a}, true, nil)
		if c.Never() != (err != nil) {
			t.Fatalf("%s (%q): explicit check error %v", a, c, err)
		}
		_, err = Check(Target{Name: "x.example", Port: 443}, []netip.Addr{a}, false, nil)
		if (c == Public) != (err == nil) {
			t.Fatalf("%s (%q): bare check error %v", a, c, err)
		}
	})
}
