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
