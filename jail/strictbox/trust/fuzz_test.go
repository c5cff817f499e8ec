package trust

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

func mkfifo(p string) error { return unix.Mkfifo(p, 0o600) }

// The parsers of the store's two files never panic, and accept only
// aisan's shape: an approval whose hash is its content's, a ledger of
// absolute, clean paths.
func FuzzParseApproval(f *testing.F) {
	f.Add([]byte(`{"path":"/a","sha256":"` + Sum(nil) + `","approved":"2026-01-01T00:00:00Z","content":null}`))
	f.Add([]byte(`{"path":"/a","sha256":"x","approved":"2026-01-01T00:00:00Z","content":"YQo="}`))
	f.Add([]byte(`{"path":"rel","sha256":"","content":""}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := parseApproval(data)
		if err == nil && (a.SHA256 != Sum(a.Content) || !strings.HasPrefix(a.Path, "/")) {
			t.Fatalf("accepted %+v", a)
		}
	})
}

func FuzzParseLedger(f *testing.F) {
	f.Add([]byte(`{"paths":["/a","/b/c"]}`))
	f.Add([]byte(`{"paths":["/a/../b"]}`))
	f.Add([]byte(`{"paths":[""],"x":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := parseLedger(data)
		for _, p := range ps {
			if err == nil && !strings.HasPrefix(p, "/") {
				t.Fatalf("accepted %q", p)
			}
		}
	})
}

// Printable leaves nothing a terminal acts on: no C0 control but tab, no
// DEL, no C1, no invalid UTF-8; and Diff's lines are Printable's.
func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"a\x1b[2Jb", "\xff\xfe", "\u009b", "ok\ttab", "x\ny"} {
		f.Add(s, "old")
	}
	f.Fuzz(func(t *testing.T, s, old string) {
		check := func(out string) {
			if !utf8.ValidString(out) {
				t.Fatalf("not UTF-8: %q", out)
			}
			for _, r := range out {
				if r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 {
					t.Fatalf("control %U in %q", r, out)
				}
			}
		}
		if p := Printable(s); strings.Contains(p, "\n") {
			t.Fatalf("a newline passed: %q", p)
		} else {
			check(p)
		}
		check(Diff([]byte(old), []byte(s)))
	})
}
