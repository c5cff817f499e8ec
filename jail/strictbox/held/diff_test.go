package held

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzWriteDiff: the diff of any two texts gives back both: the context
// and removed lines are the old text, the context and added lines the
// new, and no line carries a control character but its newline.
func FuzzWriteDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x")
	f.Add("\x1b[2J\n", "\r\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		var out bytes.Buffer
		writeDiff(&out, lines([]byte(a)), lines([]byte(b)))
		if i := strings.IndexFunc(out.String(), func(r rune) bool {
			return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0
		}); i >= 0 {
			t.Fatalf("diff of %q and %q carries a control character at %d:\n%q", a, b, i, out.String())
		}
		if strings.ContainsAny(a+b, "\x00\\") || strings.ContainsFunc(a+b, func(r rune) bool { return r < 0x20 && r != '\n' || r >= 0x7f }) {
			// Such lines are escaped on output: what holds for them is
			// the check above, not a byte-for-byte round trip.
			return
		}
		var olds, news strings.Builder
		body := strings.SplitAfter(out.String(), "\n")[1:]
		for i, l := range body {
			if l == "" || strings.HasPrefix(l, "\\ No newline") {
				continue
			}
			text := l[1:]
			if i+1 < len(body) && strings.HasPrefix(body[i+1], "\\ No newline") {
				text = strings.TrimSuffix(text, "\n")
			}
			switch l[0] {
			case ' ':
				olds.WriteString(text)
				news.WriteString(text)
			case '-':
				olds.WriteString(text)
			case '+':
				news.WriteString(text)
			default:
				t.Fatalf("line %q", l)
			}
		}
		if olds.String() != a || news.String() != b {
			t.Fatalf("diff of %q and %q:\n%s", a, b, out.String())
		}
	})
}

// TestRenderNewFileMode: an added file's diff says the mode --apply
// gives it (a hook runs only when executable).
func TestRenderNewFileMode(t *testing.T) {
	var out bytes.Buffer
	renderPair(&out, "hooks/pre-commit", Entry{}, Entry{Exists: true, Mode: 0o755, data: []byte("#!/bin/sh\n")})
	if !strings.Contains(out.String(), "new file mode 0755\n") {
		t.Errorf("an added executable shown as:\n%s", out.String())
	}
}

// TestSafeLineBidi: a line of a held file carrying bidi controls (Trojan
// Source) or a line separator is shown with them escaped.
func TestSafeLineBidi(t *testing.T) {
	l := "# ok \u202e; curl x | sh \u2066\u2069\u200b\u2028x\n"
	got := safeLine(l)
	if want := `# ok \u202e; curl x | sh \u2066\u2069\u200b\u2028x` + "\n"; got != want {
		t.Errorf("safeLine(%q) = %q, want %q", l, got, want)
	}
}

// TestRenderUnshownFile: a file the diff does not show (not text, or too
// large) is described with why, its content's sha256 and where the
// store keeps it, so the user can look at what --apply would write.
func TestRenderUnshownFile(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "copy")
	elf := []byte("\x7fELF\x02\x01\x01\x00payload")
	os.WriteFile(bin, elf, 0o755)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, bytes.Repeat([]byte("a\n"), maxShown/2+1), 0o644)
	sum := sha256.Sum256(elf)
	for _, tc := range []struct {
		name string
		a, b Entry
		want []string
	}{
		{"binary added", Entry{}, Entry{Exists: true, Mode: 0o755, Size: int64(len(elf)), at: bin},
			[]string{"now: file, 15 bytes, mode 0755, not text, sha256 " + hex.EncodeToString(sum[:]) + ", kept at " + bin}},
		{"text replaced by binary", Entry{Exists: true, Mode: 0o644, Size: 3, data: []byte("ok\n")}, Entry{Exists: true, Mode: 0o755, Size: int64(len(elf)), at: bin},
			[]string{"was: file, 3 bytes, mode 0644\n", "not text, sha256 "}},
		{"too large", Entry{}, Entry{Exists: true, Mode: 0o644, Size: maxShown + 2, at: big},
			[]string{"too large to show, sha256 ", "kept at " + big}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			renderPair(&out, "x", tc.a, tc.b)
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
