package held

import (
	"bytes"
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
