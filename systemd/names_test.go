package systemd

import (
	"strings"
	"testing"
)

func TestUnitName(t *testing.T) {
	tests := []struct {
		slot, scope, service string
	}{
		{"myrepo-3f9c2a1b", "aisan-myrepo-3f9c2a1b.scope", "aisan-svc-myrepo-3f9c2a1b.service"},
		{"a:b_c.d", "aisan-a:b_c.d.scope", "aisan-svc-a:b_c.d.service"},
		{"with space", `aisan-with\x20space.scope`, `aisan-svc-with\x20space.service`},
		{"a/b", `aisan-a\x2fb.scope`, `aisan-svc-a\x2fb.service`},
		{`back\slash`, `aisan-back\x5cslash.scope`, `aisan-svc-back\x5cslash.service`},
		{"tmpl@inst", `aisan-tmpl\x40inst.scope`, `aisan-svc-tmpl\x40inst.service`},
		{"héllo", `aisan-h\xc3\xa9llo.scope`, `aisan-svc-h\xc3\xa9llo.service`},
		{".hidden", "aisan-.hidden.scope", "aisan-svc-.hidden.service"},
		{"", "aisan-.scope", "aisan-svc-.service"},
		{"a\nb", `aisan-a\x0ab.scope`, `aisan-svc-a\x0ab.service`},
		{"UPPER", "aisan-UPPER.scope", "aisan-svc-UPPER.service"},
	}
	for _, tt := range tests {
		if got := UnitName(tt.slot); got != tt.scope {
			t.Errorf("UnitName(%q) = %q; want %q", tt.slot, got, tt.scope)
		}
		if got := ServiceName(tt.slot); got != tt.service {
			t.Errorf("ServiceName(%q) = %q; want %q", tt.slot, got, tt.service)
		}
	}
}

// TestUnitNameLong: names past systemd's limit are cut at an escape
// boundary, stay distinct and stable, and stay valid.
func TestUnitNameLong(t *testing.T) {
	a := strings.Repeat("x", 250) + "1"
	b := strings.Repeat("x", 250) + "2"
	ua, ub := UnitName(a), UnitName(b)
	if len(ua) != 255 || !strings.HasPrefix(ua, "aisan-xxxx") || !strings.HasSuffix(ua, ".scope") {
		t.Errorf("UnitName(251 bytes) = %q (%d bytes); want 255 bytes, cut, with a hash", ua, len(ua))
	}
	if ua == ub {
		t.Errorf("two long slots share the unit %q", ua)
	}
	if UnitName(a) != ua {
		t.Error("UnitName is not deterministic")
	}
	// Every byte escapes to 4: the cut must not split "\xNN".
	esc := strings.Repeat("é", 100)
	u := UnitName(esc)
	if len(u) > 255 {
		t.Errorf("UnitName of a long escaped slot is %d bytes", len(u))
	}
	body := strings.TrimSuffix(strings.TrimPrefix(u, "aisan-"), ".scope")
	body = body[:strings.LastIndexByte(body, '-')]
	if len(body)%4 != 0 || strings.Count(body, `\x`) != len(body)/4 {
		t.Errorf("cut inside an escape: %q", body)
	}
	if s := ServiceName(strings.Repeat("y", 400)); len(s) > 255 || !strings.HasSuffix(s, ".service") {
		t.Errorf("ServiceName of a long name = %q (%d bytes)", s, len(s))
	}
}

func FuzzUnitName(f *testing.F) {
	for _, s := range []string{"myrepo-3f9c2a1b", "a b", `\`, "@", "", strings.Repeat("é", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, slot string) {
		for _, u := range []string{UnitName(slot), ServiceName(slot)} {
			if len(u) > 255 {
				t.Fatalf("%q: %d bytes", u, len(u))
			}
			for i := 0; i < len(u); i++ {
				c := u[i]
				ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(`:-_.\`, c) >= 0
				if !ok {
					t.Fatalf("%q: byte %q is not allowed in a unit name", u, c)
				}
			}
		}
	})
}
