package inert

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain ünïcode", "plain ünïcode"},
		{"a\tb\r\n", `a\tb\r\n`},
		{"\x1b[2J", `\x1b[2J`},
		{"x\u009b2J", `x\u009b2J`},
		{"\x9bm", `\x9bm`},
		{"\x7f", `\x7f`},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzText: what Text returns is valid UTF-8 with no control character
// a terminal acts on, and clean text comes back as it was.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "ok", "\x1b]0;t\x07", "\xc2\x9b", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Text(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("Text(%q) = %q: holds %U", s, out, r)
			}
		}
		if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError }) && out != s {
			t.Fatalf("Text(%q) = %q: clean text changed", s, out)
		}
	})
}

func TestLines(t *testing.T) {
	if got, want := Lines("a\x1b[2J\nb\rc"), "a\\x1b[2J\nb\\rc"; got != want {
		t.Errorf("Lines: %q, want %q", got, want)
	}
}
